"""The asyncio HTTP server under the webhook receiver and the fleet page: the socket, the loop, the caps."""
