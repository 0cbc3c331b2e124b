"""The soak: the real daemon through an accelerated month; does its state level off?"""
