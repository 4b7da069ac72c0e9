"""Drives two third-party SimpleFIN client libraries against a Tributary
server, for tests/tests/simplefin_client.rs.

- simplefin4py (PyPI), the client inside Home Assistant's SimpleFIN
  integration: it claims a setup token and reads the whole Account Set, as
  Home Assistant does (it has no request parameters).
- pysimplefin (PyPI): a client with the protocol's parameters (start-date,
  end-date, pending, account, balances-only) and pydantic models that
  validate every account and transaction it reads.

Each command prints one JSON object on stdout: what the library parsed (not
the raw response), or {"error": "<exception class>"} when the library
raised. The Rust test asserts on it.

    drive.py claim SETUP_TOKEN
    drive.py read-all ACCESS_URL [START_EPOCH]
    drive.py read ACCESS_URL PARAMS_JSON
"""

import asyncio
import json
import sys
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone


def epoch(moment):
    return None if moment is None else int(moment.timestamp())


async def claim(setup_token):
    from simplefin4py import SimpleFin

    try:
        return {"access_url": await SimpleFin.claim_setup_token(setup_token)}
    except Exception as error:  # the library's own exception classes
        return {"error": type(error).__name__}


async def read_all(access_url, start=None):
    from simplefin4py import SimpleFin

    if start is not None:
        # simplefin4py asks for /accounts without parameters (Home Assistant
        # takes the server's default window); to have it read a long
        # history, the protocol's start-date is added to the one request it
        # makes. What it parses is still the library's own work.
        import aiohttp

        plain_get = aiohttp.ClientSession.get

        def get_since(session, url, **kwargs):
            return plain_get(session, url, params={"start-date": start}, **kwargs)

        aiohttp.ClientSession.get = get_since
    try:
        data = await SimpleFin(access_url).fetch_data()
    except Exception as error:
        return {"error": type(error).__name__}
    return {
        "errors": list(data.errors),
        "accounts": [
            {
                "id": account.id,
                "name": account.name,
                "org": account.org.name,
                "currency": account.currency,
                "balance": account.balance,
                "available_balance": account.available_balance,
                "balance_date": epoch(account.balance_date),
                "possible_error": account.possible_error,
                "transactions": [
                    {
                        "id": t.id,
                        "posted": epoch(t.posted),
                        "amount": t.amount,
                        "payee": t.payee,
                        "description": t.description,
                    }
                    for t in account.transactions
                ],
            }
            for account in data.accounts
        ],
    }


def read(access_url, params):
    import niquests
    from pysimplefin import SimpleFinClient
    from pysimplefin._session import Auth

    @dataclass
    class LoopbackAuth(Auth):
        """pysimplefin's DefaultAuth always builds an https:// URL; the
        test server listens on plain http on loopback, so this Auth (the
        library's extension point) keeps the Access URL as it is."""

        url: str

        @property
        def session(self):
            return niquests.Session(base_url=self.url)

    def moment(key):
        value = params.get(key)
        return None if value is None else datetime.fromtimestamp(value, timezone.utc)

    client = SimpleFinClient(LoopbackAuth(access_url))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            accounts = client.get_data(
                start_date=moment("start"),
                end_date=moment("end"),
                pending=params.get("pending", False),
                account=params.get("account"),
                balances_only=params.get("balances_only", False),
            )
        except niquests.exceptions.HTTPError as error:
            return {"error": type(error).__name__, "status": error.response.status_code}
    return {
        "warnings": [str(w.message) for w in caught],
        "accounts": [
            {
                "id": account.id,
                "org": account.org.name,
                "currency": account.currency,
                # Decimal: exact, printed as read.
                "balance": str(account.balance),
                "available_balance": str(account.available_balance),
                "transactions": [
                    {
                        "id": t.id,
                        "posted": epoch(t.posted),
                        "amount": str(t.amount),
                        "pending": t.pending,
                    }
                    for t in account.transactions
                ],
            }
            for account in accounts
        ],
    }


def main():
    command, *args = sys.argv[1:]
    if command == "claim":
        answer = asyncio.run(claim(args[0]))
    elif command == "read-all":
        answer = asyncio.run(read_all(*args[:2]))
    elif command == "read":
        answer = read(args[0], json.loads(args[1]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
