"""Tests of tfmigrate.runtime (need TensorFlow; the oracle tests also need the TF 2.15 oracle env)."""
