"""The debate protocol: state, events, engine and phases."""
