"""tfmigrate: migrate TF1 Estimator/TPUEstimator programs to TF2."""

__version__ = "0.1.0"

# Where the docs live: the rule reference on the project's repository. Every link tfmigrate prints
# or writes (SARIF helpUri, the TODO comments it leaves) is built from this one constant.
REPOSITORY_URL = "https://github.com/tfmigrate/tfmigrate"
RULES_URL = f"{REPOSITORY_URL}/blob/main/docs/rules.md"


def docs_url(code: str) -> str:
    """The docs entry for a rule or E/W code: `.../docs/rules.md#tfm102`."""
    return f"{RULES_URL}#{code.lower()}"
