"""What the operator sees: the fleet page's rows, `status`, `sessions list`, `why` and the sessions by hand."""
