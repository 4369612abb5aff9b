"""Migration rules, one per module, discovered by `tfmigrate.registry`."""
