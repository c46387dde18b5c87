"""Prompts for extraction: a built-in set written for optaccept, or a file.

The built-in set mixes kinds of text a chat model is asked for (facts,
explanation, code, arithmetic, stories, poems, lists, translation, dialogue,
rewriting, advice), because the target/draft gap depends on how peaked the
next-token distribution is, and that depends on the kind of text.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .._errors import InputError

__all__ = ["Prompt", "builtin_prompts", "load_prompts"]


@dataclasses.dataclass(frozen=True)
class Prompt:
    """One prompt: a stable id (recorded with extracted data), its kind and text."""

    id: str
    text: str
    kind: str = "user"


_BUILTIN: tuple[tuple[str, str, str], ...] = (
    ("fact-capital", "fact", "What is the capital of Australia, and why was it chosen?"),
    ("fact-water", "fact", "At what temperature does water boil on top of a high mountain?"),
    ("fact-planets", "fact", "Name the planets of the solar system in order from the Sun."),
    ("fact-photosynthesis", "fact", "What gas do plants release during photosynthesis?"),
    ("explain-rainbow", "explain", "Explain to a ten-year-old why rainbows appear after rain."),
    ("explain-interest", "explain", "Explain compound interest in three sentences."),
    ("explain-vaccine", "explain", "How does a vaccine teach the immune system?"),
    ("explain-internet", "explain", "Briefly explain how an email travels across the internet."),
    ("code-reverse", "code", "Write a Python function that reverses a string."),
    ("code-fizzbuzz", "code", "Write FizzBuzz in Python for the numbers 1 to 20."),
    ("code-sql", "code", "Write an SQL query that counts orders per customer."),
    ("code-bug", "code", "Why does `for i in range(len(xs)): xs.remove(xs[i])` fail in Python?"),
    ("math-add", "math", "What is 347 plus 589? Show your working."),
    ("math-fraction", "math", "Simplify the fraction 42/56 and explain each step."),
    ("math-train", "math", "A train travels 120 km in 1.5 hours. What is its average speed?"),
    ("math-prime", "math", "Is 91 a prime number? Explain."),
    ("story-dragon", "story", "Write the opening of a story about a shy dragon who loves baking."),
    ("story-lighthouse", "story", "Continue the story: The lighthouse keeper found a letter that"),
    ("story-robot", "story", "Tell a very short story about a robot learning to paint."),
    ("poem-autumn", "poem", "Write a four-line poem about autumn leaves."),
    ("poem-sea", "poem", "Write a haiku about the sea at night."),
    ("list-breakfast", "list", "List five quick and healthy breakfast ideas."),
    ("list-packing", "list", "What should I pack for a weekend hiking trip?"),
    ("list-study", "list", "Give me four tips for studying for an exam."),
    ("translate-fr", "translate", "Translate into French: The weather is lovely today."),
    ("translate-es", "translate", "Translate into Spanish: Where is the train station?"),
    ("dialogue-shop", "dialogue", "Write a short dialogue between a customer and a baker."),
    ("dialogue-interview", "dialogue", "Give a good answer to the interview question: why this job?"),
    ("rewrite-formal", "rewrite", "Rewrite formally: hey, can't make it tmrw, sorry!!"),
    (
        "rewrite-summary",
        "rewrite",
        "Summarise in one sentence: The city council met on Tuesday "
        "to discuss new bicycle lanes, and after a long debate voted to build three of them.",
    ),
    ("advice-sleep", "advice", "How can I fall asleep faster?"),
    ("advice-plants", "advice", "My houseplant's leaves are turning yellow. What could be wrong?"),
    ("advice-email", "advice", "How do I politely decline a meeting invitation?"),
    ("define-entropy", "define", "Define entropy in one paragraph."),
    ("define-metaphor", "define", "What is a metaphor? Give two examples."),
    ("compare-cats-dogs", "compare", "Compare cats and dogs as pets in a few sentences."),
)


def builtin_prompts() -> list[Prompt]:
    """The built-in prompt set (36 prompts of 14 kinds, written for optaccept)."""
    return [Prompt(id=i, text=t, kind=k) for i, k, t in _BUILTIN]


def load_prompts(path: str | os.PathLike) -> list[Prompt]:
    """Read prompts from a file.

    ``.jsonl``: one JSON object per line with ``"text"`` (and optional
    ``"id"``, ``"kind"``); otherwise one prompt per non-empty line, ids
    ``line-<number>``.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"prompts: {path} {'is a folder' if p.is_dir() else 'does not exist'}")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"prompts: cannot read {path} as UTF-8 text ({type(exc).__name__})") from None
    out: list[Prompt] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if p.suffix == ".jsonl":
            try:
                obj = json.loads(line)
                text = obj["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError(f"prompts: line {number} of {path} is not a JSON object with a 'text'") from None
            out.append(Prompt(str(obj.get("id", f"line-{number}")), str(text), str(obj.get("kind", "user"))))
        else:
            out.append(Prompt(f"line-{number}", line.strip()))
    if not out:
        raise InputError(f"prompts: file {path} holds no prompts")
    ids = [pr.id for pr in out]
    if len(set(ids)) != len(ids):
        raise InputError(f"prompts: ids in {path} are not unique")
    return out


def as_prompts(prompts: object) -> list[Prompt]:
    """Accept Prompt objects, strings, or a path to a prompt file."""
    if prompts is None:
        return builtin_prompts()
    if isinstance(prompts, (str, os.PathLike)) and Path(prompts).is_file():
        return load_prompts(prompts)
    if isinstance(prompts, str):
        raise InputError("prompts: a single string is ambiguous; pass a list of strings")
    try:
        items = list(prompts)  # type: ignore[call-overload]
    except TypeError:
        raise InputError("prompts: must be a list of prompts or a path to a file") from None
    out = []
    for i, pr in enumerate(items):
        if isinstance(pr, Prompt):
            out.append(pr)
        elif isinstance(pr, str):
            out.append(Prompt(f"prompt-{i}", pr))
        else:
            raise InputError(f"prompts: entry {i} is neither a Prompt nor a string")
    if not out:
        raise InputError("prompts: empty")
    ids = [pr.id for pr in out]
    if len(set(ids)) != len(ids):
        raise InputError("prompts: ids are not unique")
    return out
