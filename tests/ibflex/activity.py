"""What ibflex (an independent Flex statement parser, from PyPI) reads in
the Flex statement named on the command line, as one JSON object on
stdout: per account, its investment activity and its open positions.

Activity is each trade execution and each detailed cash transaction other
than a deposit or withdrawal (those are cash only): its transactionID, its
cash effect (a trade's netCash, a cash transaction's amount) and its units
(a trade's quantity; null for cash transactions). Positions are the summary
rows: symbol, position and positionValue. Amounts are exact decimal
strings. tests/tests/ibkr.rs compares them with what Tributary's reader
makes of the same statement.
"""

import json
import sys

from ibflex import enums, parser


def text(value):
    return None if value is None else str(value)


def account(statement):
    activity = []
    for trade in statement.Trades:
        if type(trade).__name__ == "Trade" and trade.levelOfDetail == "EXECUTION":
            activity.append(
                [f"trade:{trade.transactionID}", text(trade.netCash), text(trade.quantity)]
            )
    for cash in statement.CashTransactions:
        if cash.levelOfDetail == "DETAIL" and cash.type != enums.CashAction.DEPOSITWITHDRAW:
            activity.append([f"cash:{cash.transactionID}", text(cash.amount), None])
    positions = [
        [position.symbol, text(position.position), text(position.positionValue)]
        for position in statement.OpenPositions
        if position.levelOfDetail == "SUMMARY"
    ]
    return {"activity": sorted(activity), "positions": sorted(positions)}


response = parser.parse(open(sys.argv[1], "rb"))
json.dump({s.accountId: account(s) for s in response.FlexStatements}, sys.stdout)
