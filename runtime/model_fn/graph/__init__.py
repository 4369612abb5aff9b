"""The graph-mode tier's engine pieces (TF 1.x's Estimator on current TF, `tfm.estimator`'s calls
that the strategy tier leaves to it): a RunConfig strategy's replicas in one graph
(`distribute.py`), TPUEstimator's `iterations_per_loop` as an in-graph loop (`tpu_loop.py`), TF1
SavedModels (`saved_model.py`). `tfm.estimator.Estimator` (`runtime/estimator/core.py`) drives
them."""
