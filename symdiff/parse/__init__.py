"""parse."""
