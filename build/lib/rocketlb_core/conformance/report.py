"""Outcomes of compared expectations, collected per file."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Expectation:
    """One compared expectation: where it is (case id and step) and whether it held."""

    case: str
    ok: bool
    detail: str = ""


@dataclass
class Report:
    """Everything one file produced: outcomes, and cases that were read but not compared."""

    path: str
    kind: str
    outcomes: list[Expectation] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)

    def add(self, case: str, ok: bool, detail: str = "") -> None:
        self.outcomes.append(Expectation(case, ok, "" if ok else detail))

    def check(self, case: str, got: object, expected: object) -> bool:
        ok = got == expected
        self.add(case, ok, f"expected {expected!r}, got {got!r}")
        return ok

    @property
    def passed(self) -> int:
        return sum(o.ok for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed

    def failures(self) -> list[Expectation]:
        return [o for o in self.outcomes if not o.ok]
