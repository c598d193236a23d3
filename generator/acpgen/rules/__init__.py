"""Declarative rules: what the schemas state only in prose."""
