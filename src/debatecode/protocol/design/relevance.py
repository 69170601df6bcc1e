"""How relevant a speech is to the debate: word overlap first, sentence embeddings where words cannot tell.

A speech is measured without its format: the labels every reply carries
(``Stance:``, ``Challenge:``, ``Satisfaction: 80``...) and the debaters'
names are shared by every speech, on topic or not, so they are taken out
first. What is left is compared with the question, its context and what the
other debaters said:

1. **Word overlap** (always, no model): the share of the speech's content
   words that the references also use. A speech sharing at least
   ``CLEARLY_ON_TOPIC`` of them is on topic; nothing else is computed.
2. **Embeddings** (when an embedder is given and the words were not
   enough): the cosine similarity of the speech to the question (with its
   context) and to each other speech, the best of them. Below
   ``EMBEDDING_OFF_TOPIC`` the speech is off topic. This is what catches a
   paraphrase that shares few words but the same subject, and keeps it.
3. **Without an embedder** (the hashing embedder, or sentence-transformers
   not installed), the word share alone decides: below ``WORDS_OFF_TOPIC``.

The embedder is the memory's (``memory.embeddings``, ``[memory] embedder``):
all-MiniLM-L6-v2 when sentence-transformers is installed. It is created on
first need only, so a debate whose speeches are all plainly on topic never
loads it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from debatecode.memory.embeddings import Embedder
from debatecode.memory.settings import MemorySettings

__all__ = [
    "CLEARLY_ON_TOPIC",
    "EMBEDDING_OFF_TOPIC",
    "WORDS_OFF_TOPIC",
    "DebateRelevance",
    "Relevance",
    "SpeechRelevance",
    "judge_for",
    "relevance_for",
    "strip_format",
]

logger = logging.getLogger(__name__)

CLEARLY_ON_TOPIC = 0.25
"""Word share from which a speech is on topic without asking the embedder."""
EMBEDDING_OFF_TOPIC = 0.2
"""Cosine similarity (MiniLM) below which a speech is off topic: unrelated texts score about 0-0.1."""
WORDS_OFF_TOPIC = 0.1
"""Word share below which a speech is off topic when no embedder is available."""

_LABELS = re.compile(
    r"^[ \t>*_#-]*\**\s*(?:stance|position|reasons?|challenges?|risks?|satisfaction|ready for synthesis|"
    r"ready|recommendation|blocking|high|medium/low|medium|low)\s*\**\s*:\s*\**",
    re.IGNORECASE | re.MULTILINE,
)
_SCORE_LINE = re.compile(r"^\s*(?:satisfaction|ready for synthesis)\b.*$", re.IGNORECASE | re.MULTILINE)


def strip_format(text: str, names: Sequence[str] = ()) -> str:
    """``text`` without the reply format's labels, its score and readiness lines, and the debaters' names."""
    text = _SCORE_LINE.sub(" ", text)
    text = _LABELS.sub(" ", text)
    for name in sorted((n for n in names if n.strip()), key=len, reverse=True):
        text = re.sub(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


@dataclass(frozen=True)
class Relevance:
    """One speech's relevance: the measured value, by which measure, and the verdict."""

    value: float
    measure: str
    """``words`` (share of content words) or the embedder's name (cosine similarity)."""
    off_topic: bool


@dataclass
class SpeechRelevance:
    """Judges speeches: word share first, then an embedder (made on first need by ``embedder_factory``)."""

    embedder_factory: Callable[[], Embedder | None] | None = None
    _embedder: Embedder | None = field(default=None, init=False, repr=False)
    _tried: bool = field(default=False, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def embedder(self) -> Embedder | None:
        """The embedder, created once; None when there is none (or it failed to load: logged, words decide)."""
        with self._lock:
            if not self._tried:
                self._tried = True
                if self.embedder_factory is not None:
                    try:
                        self._embedder = self.embedder_factory()
                    except Exception as exc:  # a broken install must not stop a debate: words still judge
                        logger.warning("off-topic check: no embedder (%s); word overlap decides", exc)
            return self._embedder

    def judge(self, speech: str, framing: str, others: Sequence[str], share: float) -> Relevance:
        """Whether ``speech`` (format already stripped) is off topic, given its word ``share`` with the references.

        ``framing`` is the question and its context, ``others`` the other debaters' speeches.
        """
        if share >= CLEARLY_ON_TOPIC:
            return Relevance(share, "words", False)
        embedder = self.embedder()
        if embedder is None or embedder.name.startswith("hashing"):
            return Relevance(share, "words", share < WORDS_OFF_TOPIC)
        references = [text for text in [framing, *others] if text.strip()]
        vectors = embedder.embed([speech, *references])
        similarity = float(max((vectors[1:] @ vectors[0]).tolist(), default=0.0))
        return Relevance(similarity, embedder.name, similarity < EMBEDDING_OFF_TOPIC)


@dataclass(frozen=True)
class DebateRelevance:
    """What the gate reviewer judges relevance with in one debate: the judge and the debaters' names."""

    judge: SpeechRelevance
    names: tuple[str, ...] = ()
    """Every way a debater is named in speeches (display names and keys), taken out before measuring."""


_BY_SETTINGS: dict[tuple[str, int], SpeechRelevance] = {}
_BY_SETTINGS_LOCK = threading.Lock()


def judge_for(memory: MemorySettings | None) -> SpeechRelevance:
    """The relevance judge for ``[memory]`` settings, one per embedder choice and process.

    ``embedder = "auto"`` gives MiniLM when sentence-transformers is installed, else word overlap only;
    ``"hashing"`` gives word overlap only.
    """
    from debatecode.memory.embeddings import create_embedder

    settings = memory or MemorySettings()
    key = (settings.embedder, settings.hashing_dim)
    with _BY_SETTINGS_LOCK:
        if key not in _BY_SETTINGS:
            _BY_SETTINGS[key] = SpeechRelevance(lambda: create_embedder(settings.embedder, settings))
        return _BY_SETTINGS[key]


def relevance_for(names: Mapping[str, str], memory: MemorySettings | None) -> DebateRelevance:
    """The relevance measure of a running debate: ``memory``'s embedder, its debaters' ids and ``names``."""
    return DebateRelevance(judge_for(memory), (*names.values(), *names.keys()))
