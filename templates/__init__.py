"""The Jinja2 templates acpgen renders, one per generated module."""
