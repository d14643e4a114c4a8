"""Model prices, per million tokens, in US dollars. Unknown models cost 0 and say so
(`price_known`), so a frame never shows an invented figure. Add a row when you deploy a
model; a self-hosted model (vLLM, Ollama, llama.cpp) is listed at 0."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Price:
    input_per_million: Decimal
    output_per_million: Decimal


PRICES: dict[str, Price] = {
    "gpt-4o": Price(Decimal("2.50"), Decimal("10.00")),
    "gpt-4o-mini": Price(Decimal("0.15"), Decimal("0.60")),
    "gpt-4.1": Price(Decimal("2.00"), Decimal("8.00")),
    "gpt-4.1-mini": Price(Decimal("0.40"), Decimal("1.60")),
    "gpt-4.1-nano": Price(Decimal("0.10"), Decimal("0.40")),
    "deepseek-chat": Price(Decimal("0.27"), Decimal("1.10")),
    "qwen-plus": Price(Decimal("0.40"), Decimal("1.20")),
    # Local models: the machine is already paid for.
    "qwen3-1.7b": Price(Decimal("0"), Decimal("0")),
    "keel-builtin-1": Price(Decimal("0"), Decimal("0")),
}


def price_known(model: str) -> bool:
    return _lookup(model) is not None


def _lookup(model: str) -> Price | None:
    name = (model or "").lower()
    if name in PRICES:
        return PRICES[name]
    # Providers answer with dated names ("gpt-4o-mini-2024-07-18"): take the longest prefix.
    matches = [key for key in PRICES if name.startswith(key + "-")]
    return PRICES[max(matches, key=len)] if matches else None


def cost_for(model: str, input_tokens: int, output_tokens: int) -> Decimal:
    price = _lookup(model)
    if price is None:
        return Decimal("0")
    cost = (price.input_per_million * input_tokens + price.output_per_million * output_tokens) / Decimal(1_000_000)
    return cost.quantize(Decimal("0.00000001"))
