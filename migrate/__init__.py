"""tfmigrate: migrate TF1 Estimator/TPUEstimator programs to TF2."""

__version__ = "0.1.0"
