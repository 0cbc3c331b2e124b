"""The kill campaign: the poller, the tmux server and harnesses SIGKILLed at random and
aimed instants while comments stream in; every comment accounted for from the harness's record."""
