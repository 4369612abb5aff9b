"""tfmigrate.runtime: what migrated programs import."""
