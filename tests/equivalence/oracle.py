"""The oracle environment, for the tests: `tfmigrate.oracle_env` (which `tfmigrate verify` uses too)."""

from tfmigrate.oracle_env import ORACLE_EXTRAS, ORACLE_PINS, cache_dir, oracle_dir, oracle_python, oracle_run_env, quiet_env

__all__ = ["ORACLE_EXTRAS", "ORACLE_PINS", "cache_dir", "oracle_dir", "oracle_python", "oracle_run_env", "quiet_env"]
