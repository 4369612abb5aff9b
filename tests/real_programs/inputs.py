"""Tiny inputs for the real programs, generated in a directory of the test's own.

Everything is derived from a fixed word list and a seeded `random.Random`, so a session makes the
same files every time: a WordPiece vocabulary, MRPC-shaped TSVs, a SQuAD-v1.1-shaped JSON, a text
corpus (for BERT's `create_pretraining_data`, run on the oracle by the lane, and for training a
SentencePiece model for ALBERT), and tiny BERT/ALBERT configs with dropout 0.

The *training* sets hold one example each (MRPC: one pair; SQuAD: one question; pretraining: one
TFRecord, see `single_record`): the programs shuffle their training input with an unseeded
`Dataset.shuffle`, so with several distinct examples no two runs of the original — on any
TensorFlow — would draw the same batches. With one example every batch is that example repeated,
whatever the shuffle does. Evaluation input is not shuffled and has several distinct examples.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the a of and to in is was for on that with as by at from it his an were are which this be "
    "has had not or its new after first two one her he she they their been also who more than "
    "city team film river music year game king war school state house time world life day"
).split()
SEED = 20240611


def _rng() -> random.Random:
    return random.Random(SEED)


def _sentence(rng: random.Random, low: int = 4, high: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def write_vocab(path: Path) -> Path:
    """A WordPiece vocab: the specials, every word, and a few `##` pieces."""
    pieces = ["##s", "##ed", "##ing"]
    path.write_text("\n".join(SPECIAL + sorted(set(WORDS)) + pieces) + "\n", encoding="utf-8")
    return path


def vocab_size(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").split())


def write_mrpc(directory: Path, dev_examples: int = 6, test_examples: int = 3) -> Path:
    """MRPC's train.tsv/dev.tsv/test.tsv (header, then Quality, #1 ID, #2 ID, #1 String, #2 String)."""
    rng = _rng()
    directory.mkdir(parents=True, exist_ok=True)
    header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"

    def rows(count: int, start: int) -> list[str]:
        return [
            f"{rng.randint(0, 1)}\t{start + 2 * i}\t{start + 2 * i + 1}\t{_sentence(rng)}\t{_sentence(rng)}"
            for i in range(count)
        ]

    (directory / "train.tsv").write_text("\n".join([header, *rows(1, 1000)]) + "\n", encoding="utf-8")
    (directory / "dev.tsv").write_text("\n".join([header, *rows(dev_examples, 2000)]) + "\n", encoding="utf-8")
    test = ["index\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    test += [f"{i}\t{3000 + 2 * i}\t{3001 + 2 * i}\t{_sentence(rng)}\t{_sentence(rng)}" for i in range(test_examples)]
    (directory / "test.tsv").write_text("\n".join(test) + "\n", encoding="utf-8")
    return directory


def _squad(rng: random.Random, questions: int, prefix: str) -> dict:
    paragraphs = []
    for p in range(questions):
        sentences = [_sentence(rng) for _ in range(3)]
        context = " . ".join(sentences) + " ."
        chosen = rng.randrange(len(sentences))
        words = sentences[chosen].split()
        first = rng.randrange(len(words) - 1)
        answer = " ".join(words[first : first + 2])
        answer_start = sum(len(s) + 3 for s in sentences[:chosen]) + len(" ".join(words[:first] + [""]))
        assert context[answer_start : answer_start + len(answer)] == answer
        question = _sentence(rng, 3, 6) + " ?"
        paragraphs.append(
            {
                "context": context,
                "qas": [{"id": f"{prefix}{p}", "question": question,
                         "answers": [{"text": answer, "answer_start": answer_start}]}],
            }
        )
    return {"version": "1.1", "data": [{"title": f"tiny {prefix}", "paragraphs": paragraphs}]}


def write_squad(directory: Path, predict_questions: int = 3) -> tuple[Path, Path]:
    """SQuAD v1.1-shaped train (one question) and predict files."""
    rng = _rng()
    directory.mkdir(parents=True, exist_ok=True)
    train, predict = directory / "train-v1.1.json", directory / "dev-v1.1.json"
    train.write_text(json.dumps(_squad(rng, 1, "train")), encoding="utf-8")
    predict.write_text(json.dumps(_squad(rng, predict_questions, "dev")), encoding="utf-8")
    return train, predict


def write_corpus(path: Path, documents: int = 4, sentences: int = 6) -> Path:
    """create_pretraining_data's input: one sentence a line, documents separated by blank lines."""
    rng = _rng()
    docs = ["\n".join(_sentence(rng) + " ." for _ in range(sentences)) for _ in range(documents)]
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return path


def train_sentencepiece(corpus: Path, prefix: Path) -> Path:
    """A tiny word-level SentencePiece model with ALBERT's ids: <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4.

    Word-level, so a word is one piece as with the WordPiece vocab (a subword model of a corpus
    this small splits words into letters, and a SQuAD paragraph would no longer fit one window).
    Trained on `corpus` plus every word, `.` and `?`.
    """
    import sentencepiece as spm

    text = prefix.with_suffix(".txt")
    text.write_text(corpus.read_text(encoding="utf-8") + "\n" + " ".join(WORDS) + " . ?\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(prefix),
        vocab_size=len(WORDS) + 8,
        hard_vocab_limit=False,
        use_all_vocab=True,
        model_type="word",
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
        pad_piece="<pad>", unk_piece="<unk>",
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
        num_threads=1,
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


def sentencepiece_size(model: Path) -> int:
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=str(model)).get_piece_size()


TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
            max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def write_bert_config(path: Path, vocab: int) -> Path:
    config = dict(TINY, vocab_size=vocab, hidden_act="gelu", initializer_range=0.02, type_vocab_size=2)
    path.write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    return path


def write_albert_config(path: Path, vocab: int) -> Path:
    config = dict(TINY, vocab_size=vocab, embedding_size=16, num_hidden_groups=1, inner_group_num=1,
                  down_scale_factor=1, hidden_act="gelu", initializer_range=0.02, type_vocab_size=2)
    path.write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    return path


def tfrecords(path: Path) -> list[bytes]:
    """The framed records of a TFRecord file (length, its CRC, data, data CRC), undecoded."""
    data, records, offset = path.read_bytes(), [], 0
    while offset < len(data):
        (length,) = struct.unpack("<Q", data[offset : offset + 8])
        end = offset + 8 + 4 + length + 4
        records.append(data[offset:end])
        offset = end
    return records


def single_record(source: Path, target: Path) -> Path:
    """`target`: a TFRecord file of `source`'s first record (byte for byte, CRCs included)."""
    records = tfrecords(source)
    if not records:
        raise ValueError(f"{source} holds no records")
    target.write_bytes(records[0])
    return target
