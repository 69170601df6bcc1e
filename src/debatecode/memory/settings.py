"""Settings of the memory layer: the ``[memory]`` and ``[reflexion]`` sections of ``debatecode.toml``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EmbedderName", "MemorySettings", "ReflexionSettings"]

EmbedderName = Literal["auto", "sentence-transformers", "hashing"]


class MemorySettings(BaseModel):
    """Episodic memory and accumulated wisdom, kept in the session store's database (see docs/memory.md)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Store Reflexion episodes and retrieve them by similarity. Off: nothing is stored or retrieved."""
    embedder: EmbedderName = "auto"
    """How texts become vectors: ``sentence-transformers`` (all-MiniLM-L6-v2, offline; extra ``embeddings``), ``hashing`` (dependency-free feature hashing), or ``auto``: sentence-transformers when installed, else hashing (logged once per process). Changing it re-embeds stored episodes on the next open."""
    max_episodes: int = Field(default=1000, ge=1)
    """Most episodes kept; beyond it the oldest are evicted first (FIFO), with their vectors."""
    k: int = Field(default=5, ge=1)
    """Episodes retrieved per query."""
    similarity_threshold: float = Field(default=0.3, ge=-1.0, le=1.0)
    """Least cosine similarity for an episode or lesson to be retrieved."""
    wisdom: bool = True
    """Extract generalisable lessons from episodes, keep them across sessions, and inject the most relevant into new tasks."""
    wisdom_k: int = Field(default=3, ge=1)
    """Lessons injected per task."""
    hashing_dim: int = Field(default=512, ge=16, le=1 << 20)
    """Vector size of the ``hashing`` embedder."""


class ReflexionSettings(BaseModel):
    """Reflexion: reflect on failing tests, remember, and retry (see docs/reflexion.md)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Let agents reflect on failed tests and retry with their reflections in context (inside a debate). The `reflexion` strategy always reflects: it is the strategy itself."""
    max_attempts: int = Field(default=3, ge=1)
    """Reflect-and-retry attempts per candidate at most."""
    confidence_threshold: float = Field(default=0.9, ge=0.0, le=1.0)
    """Stop retrying once this share of the tests passes (all passing always stops)."""
    template: str = Field(default="default", min_length=1)
    """Reflection prompt variant: ``default`` uses ``reflect.chat.j2`` / ``reflect.completion.j2``, a name ``X`` uses ``reflect-X.chat.j2`` / ``reflect-X.completion.j2``."""
    in_debate: bool = True
    """Run Reflexion for failing candidates before each debate round."""
    max_reflections_in_prompt: int = Field(default=5, ge=0)
    """Most recent reflections put into a retry prompt."""
