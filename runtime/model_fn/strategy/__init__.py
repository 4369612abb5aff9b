"""The strategy tier's engine: a TF1 model_fn run as written in TF2, inside the strategy's
`tf.function` (`runner.py`; the package doc of `runtime/model_fn` lists the modules)."""
