"""A tiny calculator, the example project tcrunner's quick start runs."""


def add(a, b):
    return a + b


def divide(a, b):
    return a / b


def parse(text):
    """Parses `a op b` and evaluates it."""
    a, op, b = text.split()
    ops = {"+": add, "/": divide, "*": lambda x, y: x * y}
    return ops[op](int(a), int(b))
