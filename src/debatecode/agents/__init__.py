"""Agents: roles, prompts and the participants that play them."""
