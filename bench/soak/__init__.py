"""The soak (issue 23 item 5): the real daemon through an accelerated month; does its state level off?"""
