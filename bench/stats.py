"""Order statistics of samples (seconds in, the caller picks the unit)."""

from __future__ import annotations

import statistics


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at rank ⌊fraction·(n−1)⌋ of the sorted samples (no interpolation)."""
    ordered = sorted(samples)
    return ordered[int(fraction * (len(ordered) - 1))]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def summary_us(samples: list[float]) -> dict[str, float]:
    """Median, p99 and p99.9 in microseconds, and the sample count."""
    return {"median_us": round(median(samples) * 1e6, 1),
            "p99_us": round(percentile(samples, 0.99) * 1e6, 1),
            "p999_us": round(percentile(samples, 0.999) * 1e6, 1),
            "samples": len(samples)}


def summary_ms(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(median(samples) * 1e3, 2),
            "p99_ms": round(percentile(samples, 0.99) * 1e3, 2),
            "samples": len(samples)}
