"""A local HTTPS stand-in of the GitHub REST API that the real `gh` can talk to."""

from tests.github_standin.server import StandIn
from tests.github_standin.world import Failure, World

__all__ = ["Failure", "StandIn", "World"]
