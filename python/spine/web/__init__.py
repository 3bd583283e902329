"""``spine web``: the browser's front end and its same-origin proxy to the gateway."""
