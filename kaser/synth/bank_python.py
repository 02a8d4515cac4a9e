"""Python problems of the synthetic benchmark: `PROBLEMS`, a list of `BankProblem` (see bank.py).

Each task is one top-level function, written for this project in the CodingBat style. Every
problem has at least two reference solutions in different styles (if/elif chain vs early return,
for vs while, accumulator vs built-in) and at least eight test cases with boundary values.
Checked by `python -m pytest tests/test_bank.py`.
"""

from __future__ import annotations

from textwrap import dedent

from kaser.synth.bank import BankProblem


def _code(text: str) -> str:
    """A reference solution as written in this file, without the source indentation."""
    return dedent(text).strip("\n") + "\n"


PROBLEMS: list[BankProblem] = [
    BankProblem(
        problem_id="python_ticket_price",
        entry="ticket_price",
        statement=(
            "A cinema charges 5 dollars for a child (age under 12), 7 dollars for a senior "
            "(age 65 or more) and 12 dollars for everyone else. Club members get 2 dollars off "
            "any ticket. Given the age and whether the customer is a member, return the price."
        ),
        kcs=("conditionals", "numeric comparison", "arithmetic", "boolean logic"),
        references=(
            _code("""
                def ticket_price(age, member):
                    if age < 12:
                        price = 5
                    elif age >= 65:
                        price = 7
                    else:
                        price = 12
                    if member:
                        price = price - 2
                    return price
            """),
            _code("""
                def ticket_price(age, member):
                    discount = 2 if member else 0
                    if age < 12:
                        return 5 - discount
                    if age >= 65:
                        return 7 - discount
                    return 12 - discount
            """),
        ),
        tests=(
            ((5, False), 5),
            ((11, True), 3),
            ((12, False), 12),
            ((30, True), 10),
            ((64, False), 12),
            ((65, False), 7),
            ((80, True), 5),
            ((0, False), 5),
            ((40, False), 12),
        ),
    ),
    BankProblem(
        problem_id="python_can_hike",
        entry="can_hike",
        statement=(
            "We go hiking when the temperature (in degrees Celsius) is from 10 to 30 inclusive. "
            "When it rains we are pickier and only go when it is from 20 to 25 inclusive. Given the "
            "temperature and whether it is raining, return True if we go hiking."
        ),
        kcs=("boolean operators", "numeric comparison", "conditionals", "boolean logic"),
        references=(
            _code("""
                def can_hike(temp, raining):
                    if raining:
                        return temp >= 20 and temp <= 25
                    else:
                        return temp >= 10 and temp <= 30
            """),
            _code("""
                def can_hike(temp, raining):
                    low = 10
                    high = 30
                    if raining:
                        low = 20
                        high = 25
                    if temp < low or temp > high:
                        return False
                    return True
            """),
        ),
        tests=(
            ((10, False), True),
            ((9, False), False),
            ((30, False), True),
            ((31, False), False),
            ((15, True), False),
            ((20, True), True),
            ((25, True), True),
            ((26, True), False),
            ((0, False), False),
            ((-5, True), False),
        ),
    ),
    BankProblem(
        problem_id="python_letter_grade",
        entry="letter_grade",
        statement=(
            "Turn an exam score into a letter: \"A\" for 90 and above, \"B\" for 80 to 89, \"C\" for "
            "70 to 79, \"D\" for 60 to 69 and \"F\" below 60. A score below 0 or above 100 is a "
            "typing mistake: return \"?\" for it."
        ),
        kcs=("conditionals", "nested conditionals", "numeric comparison", "return statements"),
        references=(
            _code("""
                def letter_grade(score):
                    if score < 0 or score > 100:
                        return "?"
                    elif score >= 90:
                        return "A"
                    elif score >= 80:
                        return "B"
                    elif score >= 70:
                        return "C"
                    elif score >= 60:
                        return "D"
                    else:
                        return "F"
            """),
            _code("""
                def letter_grade(score):
                    grade = "?"
                    if score >= 0 and score <= 100:
                        if score < 60:
                            grade = "F"
                        elif score < 70:
                            grade = "D"
                        elif score < 80:
                            grade = "C"
                        elif score < 90:
                            grade = "B"
                        else:
                            grade = "A"
                    return grade
            """),
        ),
        tests=(
            ((95,), "A"),
            ((90,), "A"),
            ((89,), "B"),
            ((80,), "B"),
            ((75,), "C"),
            ((60,), "D"),
            ((59,), "F"),
            ((0,), "F"),
            ((100,), "A"),
            ((101,), "?"),
            ((-1,), "?"),
        ),
    ),
    BankProblem(
        problem_id="python_middle_of_three",
        entry="middle_of_three",
        statement=(
            "Given three whole numbers, return the one that would sit in the middle if they were "
            "sorted. When two or more are equal, that shared value may be the middle one."
        ),
        kcs=("nested conditionals", "numeric comparison", "boolean operators"),
        references=(
            _code("""
                def middle_of_three(a, b, c):
                    if a <= b:
                        if b <= c:
                            return b
                        elif a <= c:
                            return c
                        else:
                            return a
                    else:
                        if a <= c:
                            return a
                        elif b <= c:
                            return c
                        else:
                            return b
            """),
            _code("""
                def middle_of_three(a, b, c):
                    if (a >= b and a <= c) or (a <= b and a >= c):
                        return a
                    if (b >= a and b <= c) or (b <= a and b >= c):
                        return b
                    return c
            """),
            _code("""
                def middle_of_three(a, b, c):
                    ordered = sorted([a, b, c])
                    return ordered[1]
            """),
        ),
        tests=(
            ((1, 2, 3), 2),
            ((3, 2, 1), 2),
            ((2, 1, 3), 2),
            ((1, 3, 2), 2),
            ((5, 5, 1), 5),
            ((7, 7, 7), 7),
            ((-4, 0, -9), -4),
            ((0, 0, 3), 0),
            ((10, -10, 0), 0),
        ),
    ),
    BankProblem(
        problem_id="python_sum_skip_sevens",
        entry="sum_skip_sevens",
        statement=(
            "Return the sum of three numbers, except that any number that is a multiple of 7 "
            "(including 0 and negative multiples) does not count and adds nothing."
        ),
        kcs=("modulo", "arithmetic", "conditionals", "variables"),
        references=(
            _code("""
                def sum_skip_sevens(a, b, c):
                    total = 0
                    if a % 7 != 0:
                        total += a
                    if b % 7 != 0:
                        total += b
                    if c % 7 != 0:
                        total += c
                    return total
            """),
            _code("""
                def sum_skip_sevens(a, b, c):
                    total = 0
                    for value in [a, b, c]:
                        if value % 7 == 0:
                            continue
                        total = total + value
                    return total
            """),
        ),
        tests=(
            ((1, 2, 3), 6),
            ((7, 2, 3), 5),
            ((14, 21, 28), 0),
            ((0, 5, 6), 11),
            ((-7, 1, 1), 2),
            ((8, 9, 10), 27),
            ((0, 0, 0), 0),
            ((-3, 70, 4), 1),
        ),
    ),
    BankProblem(
        problem_id="python_is_leap_year",
        entry="is_leap_year",
        statement=(
            "A year is a leap year when it divides evenly by 4, except that years dividing evenly by "
            "100 are not, unless they also divide evenly by 400. Return True for a leap year."
        ),
        kcs=("modulo", "boolean operators", "conditionals", "boolean logic"),
        references=(
            _code("""
                def is_leap_year(year):
                    return (year % 4 == 0 and year % 100 != 0) or year % 400 == 0
            """),
            _code("""
                def is_leap_year(year):
                    if year % 400 == 0:
                        return True
                    elif year % 100 == 0:
                        return False
                    elif year % 4 == 0:
                        return True
                    else:
                        return False
            """),
        ),
        tests=(
            ((2024,), True),
            ((2023,), False),
            ((1900,), False),
            ((2000,), True),
            ((2100,), False),
            ((4,), True),
            ((1,), False),
            ((0,), True),
            ((1996,), True),
        ),
    ),
    BankProblem(
        problem_id="python_average_of_three",
        entry="average_of_three",
        statement=(
            "Return the average of three whole-number measurements as a float, keeping the "
            "fractional part (the average of 1, 2 and 2 is 1.666...)."
        ),
        kcs=("arithmetic", "variables", "return statements"),
        references=(
            _code("""
                def average_of_three(a, b, c):
                    total = a + b + c
                    average = total / 3
                    return average
            """),
            _code("""
                def average_of_three(a, b, c):
                    return (a + b + c) / 3.0
            """),
        ),
        tests=(
            ((1, 2, 3), 2.0),
            ((1, 2, 2), 5 / 3),
            ((0, 0, 0), 0.0),
            ((0, 0, 1), 1 / 3),
            ((-3, 3, 1), 1 / 3),
            ((10, 10, 10), 10.0),
            ((-1, -1, -2), -4 / 3),
            ((100, 0, 1), 101 / 3),
        ),
    ),
    BankProblem(
        problem_id="python_list_average",
        entry="list_average",
        statement=(
            "Return the average of the numbers in a list as a float, keeping the fractional part. "
            "An empty list has average 0.0."
        ),
        kcs=("for loops", "array indexing", "arithmetic", "conditionals"),
        references=(
            _code("""
                def list_average(nums):
                    if len(nums) == 0:
                        return 0.0
                    total = 0
                    for i in range(len(nums)):
                        total += nums[i]
                    return total / len(nums)
            """),
            _code("""
                def list_average(nums):
                    total = 0
                    count = 0
                    i = 0
                    while i < len(nums):
                        total = total + nums[i]
                        count += 1
                        i += 1
                    if count > 0:
                        return total / count
                    else:
                        return 0.0
            """),
            _code("""
                def list_average(nums):
                    if not nums:
                        return 0.0
                    return sum(nums) / len(nums)
            """),
        ),
        tests=(
            (([1, 2, 3, 4],), 2.5),
            (([5],), 5.0),
            (([],), 0.0),
            (([0, 0, 0],), 0.0),
            (([1, 2],), 1.5),
            (([-1, -2, -4],), -7 / 3),
            (([10, 20, 30],), 20.0),
            (([1, 1, 2],), 4 / 3),
        ),
    ),
]
