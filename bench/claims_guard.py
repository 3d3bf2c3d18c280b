"""The claim guard on 2 kB outputs: outputs checked per second, p50/p99 latency of guard_text.

    .venv/bin/python bench/claims_guard.py [OUTPUTS_PER_LANGUAGE]

For each language (pt, en, es), OUTPUTS_PER_LANGUAGE (default 300) outputs of ~2 kB built
from the trade's sentences (prices with list and sale roles, deadlines, promises, stock, a
discount, a citation, order numbers, postal codes and sizes), each with a different amount,
guarded with the example retail contract (examples/claims/retail.json: 6 categories,
internal-text fingerprints) against evidence of 12 tool calls, a stale read, a document and
an anchor. Times each ``guard_text`` call (the number reader included), the reader alone, and
the checker alone (the same guard on numbers read beforehand).
``cpu ms`` is the process's CPU time per output (steadier than wall time when the machine is
shared). The budget is 150 ms per candidate; the aim, under 5 ms per output. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.sdk.claims import Claims, Evidence, load_contract
from turnstream.sdk.claims.numbers import read_numbers

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-11-29T12:00:05Z"
LAW = (
    "Art. 49. O consumidor pode desistir do contrato, no prazo de 7 dias a contar de sua "
    "assinatura ou do ato de recebimento do produto ou serviço."
)

SENTENCES = {
    "pt": [
        "De R$ {a},90 por R$ {b},90 no Pix.",
        "A entrega chega em {d} dias úteis para o CEP 01310-100.",
        "Enviei o link de pagamento no seu WhatsApp.",
        "Restam {n} unidades em estoque do tamanho 42.",
        "Você tem {p}% de desconto na segunda unidade.",
        "Seu pedido 123456 foi confirmado e o protocolo é 2024-000123.",
        "Pelo art. 49 do CDC, você pode desistir em até 7 dias.",
        "Se preferir, posso verificar outras cores e modelos para você.",
    ],
    "en": [
        "It was ${a}.90, now only ${b}.90 with free shipping.",
        "Delivery arrives in {d} business days to ZIP code 94105.",
        "I sent the link to your email a moment ago.",
        "There are {n} left in stock in size 10.",
        "You get {p}% off the second pair today.",
        "Your order 123456 is confirmed; call (415) 555-0100 with questions.",
        "Under Article 12 of the store policy, returns are free.",
        "If you prefer, I can look at other colors and models for you.",
    ],
    "es": [
        "Antes {a},90 €, ahora solo {b},90 € con envío gratis.",
        "La entrega en {d} días hábiles al código postal 08001.",
        "Te envié el enlace de pago hace un momento.",
        "Quedan {n} unidades en stock de la talla 40.",
        "Tienes {p}% de descuento en la segunda unidad.",
        "Tu pedido 123456 está confirmado.",
        "Según el artículo 3 de la política de la tienda, la devolución es gratuita.",
        "Si prefieres, puedo buscar otros colores y modelos para ti.",
    ],
}


def output(lang: str, rng: random.Random) -> str:
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < 2000:
        for s in SENTENCES[lang]:
            a = rng.randint(150, 999)
            parts.append(
                s.format(a=a, b=a - rng.randint(10, 99), d=rng.randint(2, 9),
                         n=rng.randint(2, 9), p=rng.choice([10, 15, 20]))
            )  # fmt: skip
    return " ".join(parts)[:2100]


def evidence(rng: random.Random) -> Evidence:
    calls = [
        {"id": f"c{i}", "tool": "search_products", "at": NOW,
         "values": [{"object": f"iv:{i}", "field": "price_sale", "class": "money",
                     "value": rng.randint(100, 999) + 0.9, "claim_age_s": 900},
                    {"object": f"iv:{i}", "field": "price_list", "class": "money",
                     "value": rng.randint(100, 999) + 0.9, "claim_age_s": 900}]}
        for i in range(10)
    ]  # fmt: skip
    calls.append({"id": "q", "tool": "shipping_quote", "at": NOW, "values": []})
    calls.append({"id": "l", "tool": "send_link", "at": NOW, "values": []})
    return Evidence.model_validate(
        {
            "calls": calls,
            "reads": [{"object": "iv:1", "at": "2026-11-29T10:00:00Z",
                       "values": [{"field": "stock", "class": "count", "value": 4,
                                   "claim_age_s": 300}]}],
            "documents": [{"id": "cdc", "text": LAW}],
            "anchors": [{"start": 0, "end": 400, "quote": LAW[9:90], "document": "cdc"}],
        }
    )  # fmt: skip


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    contract = load_contract(ROOT / "examples" / "claims" / "retail.json")
    claims = Claims(contract, agent="sales-assistant")
    rng = random.Random(7)
    one, five, _ = os.getloadavg()
    print(f"{os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {one:.2f} (1 min), {five:.2f} (5 min)")  # fmt: skip
    print(f"contract {contract.version}: {len(contract.categories)} categories; "
          f"{n} outputs per language")  # fmt: skip
    print(f"{'lang':4} {'bytes':>6} {'claims':>6} {'out/s':>7} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7} {'cpu ms':>6} {'reader p50':>10} {'checker p50':>11} "
          f"{'checker p99':>11}")  # fmt: skip
    for lang in ("pt", "en", "es"):
        texts = [output(lang, rng) for _ in range(n)]
        ev = evidence(rng)
        for t in texts[:20]:  # warm-up: regexes compiled, caches filled
            claims.guard_text(t, context="chat", evidence=ev, language=lang)
        took: list[float] = []
        reader: list[float] = []
        found = 0
        cpu = time.process_time()
        started = time.perf_counter()
        for t in texts:
            t0 = time.perf_counter()
            g = claims.guard_text(t, context="chat", evidence=ev, language=lang)
            took.append(time.perf_counter() - t0)
            found += len(g.claims)
        total = time.perf_counter() - started
        cpu = (time.process_time() - cpu) / n
        read: dict[str, list] = {}
        for t in texts:
            t0 = time.perf_counter()
            read[t] = read_numbers(t, lang)
            reader.append(time.perf_counter() - t0)
        # The checker alone: the same guard with the numbers already read.
        alone = Claims(contract, agent="sales-assistant", reader=lambda t, _lang, r=read: r[t])
        rest: list[float] = []
        for t in texts:
            t0 = time.perf_counter()
            alone.guard_text(t, context="chat", evidence=ev, language=lang)
            rest.append(time.perf_counter() - t0)
        size = statistics.mean(len(t.encode()) for t in texts)
        print(
            f"{lang:4} {size:6.0f} {found / n:6.1f} {n / total:7.0f} "
            f"{statistics.median(took) * 1e3:7.2f} {pct(took, 99) * 1e3:7.2f} "
            f"{max(took) * 1e3:7.2f} {cpu * 1e3:6.2f} {statistics.median(reader) * 1e3:10.2f} "
            f"{statistics.median(rest) * 1e3:11.2f} {pct(rest, 99) * 1e3:11.2f}"
        )


if __name__ == "__main__":
    main()
