"""attribute."""
