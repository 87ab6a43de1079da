"""One module per page: widgets, caching, layout. Pages call model/ and viz/."""
