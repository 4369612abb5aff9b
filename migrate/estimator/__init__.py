"""The model_fn analysis: a TF1 `model_fn(features, labels, mode, params)` -> a `Plan` that the
code generators (`keras_codegen`, `ctl_codegen`) render as a Keras program.

The analysis is a data flow over the model_fn's top-level statements:
- statements that (transitively) read `features` are the forward pass -> `Model.call`; TF1 layer
  calls in them are hoisted into `Model.__init__` (Keras layers are built once, not per call);
- statements that read `labels` make the loss -> a Keras loss object, or `Model.compute_loss`;
- the `tf.train.*Optimizer` (minus `CrossShardOptimizer`, which the strategy replaces) -> compile;
- statements that read neither (hyper-parameters from `params`, constants) are copied to
  whichever piece needs them;
- `mode == ModeKeys.TRAIN` becomes Keras's `training` flag.

Anything outside that shape makes `analyze()` raise `Unsupported` instead of returning a plan;
the rule then marks the program with TODOs and leaves it alone.

The modules, lowest first (each imports only from the ones above it, and only public names):
- `plan`: `Plan`, `Layer`, the per-statement record `Stmt` with its `StmtKind`, `Unsupported`;
  `analysis`: `Analysis`, the protocol the parts type the analyzer they are handed as (so that no
  part imports `analyzer`);
- `tables`: TF1 -> TF2 facts (layers, variables, initializers, optimizers, schedules, losses,
  summaries, metrics);
- `syntax`: small queries on libcst nodes; `hoist`: a helper's call moved out of the expression
  it is nested in, where that keeps the order of what runs;
- one module per concern, each a mixin class of `ModelFnAnalyzer` (plus the CST transformers of
  that concern): `shapes` (statement normalisation: the body -> straight lines), `spec` (the
  EstimatorSpec, mode branches, PREDICT), `checkpoints` (init_from_checkpoint, scaffold),
  `dataflow` (which statements feed which piece), `forward` (forward pass, layers, variables),
  `scoped` (calls run under a TF1 variable store), `loss`, `optimizer` (optimizer, schedules,
  gradient code, global step), `metrics`, `summaries` (summaries and host_call);
- `analyzer`: `ModelFnAnalyzer` itself: its state, the queries every part asks, and `analyze()`
  as a sequence of named steps.
"""
