"""charge."""
