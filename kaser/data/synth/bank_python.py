"""Python problems of the synthetic benchmark: `PROBLEMS`, a list of `BankProblem` (see bank.py).

Each task is one top-level function, written for this project in the CodingBat style. Every
problem has at least two reference solutions in different styles (if/elif chain vs early return,
for vs while, accumulator vs built-in) and at least eight test cases with boundary values.
Checked by `python -m pytest tests/test_bank.py`.
"""

from __future__ import annotations

from textwrap import dedent

from kaser.data.synth.bank import BankProblem


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
    BankProblem(
        problem_id="python_count_evens",
        entry="count_evens",
        statement="Return how many of the numbers in a list are even. Zero and negative even numbers count too.",
        kcs=("for loops", "array indexing", "modulo", "conditionals", "variables"),
        references=(
            _code("""
                def count_evens(nums):
                    count = 0
                    for i in range(len(nums)):
                        if nums[i] % 2 == 0:
                            count += 1
                    return count
            """),
            _code("""
                def count_evens(nums):
                    evens = 0
                    index = 0
                    while index < len(nums):
                        value = nums[index]
                        index += 1
                        if value % 2 != 0:
                            continue
                        evens = evens + 1
                    return evens
            """),
            _code("""
                def count_evens(nums):
                    return len([n for n in nums if n % 2 == 0])
            """),
        ),
        tests=(
            (([2, 1, 2, 3, 4],), 3),
            (([2, 2, 0],), 3),
            (([1, 3, 5],), 0),
            (([],), 0),
            (([0],), 1),
            (([7],), 0),
            (([-2, -3, -4],), 2),
            (([11, 9, 0, 1],), 1),
        ),
    ),
    BankProblem(
        problem_id="python_largest_value",
        entry="largest_value",
        statement="Given a list of numbers with at least one element, return its largest value.",
        kcs=("for loops", "array indexing", "numeric comparison", "variables"),
        references=(
            _code("""
                def largest_value(nums):
                    largest = nums[0]
                    for i in range(1, len(nums)):
                        if nums[i] > largest:
                            largest = nums[i]
                    return largest
            """),
            _code("""
                def largest_value(nums):
                    best = None
                    for value in nums:
                        if best is None or value > best:
                            best = value
                    return best
            """),
            _code("""
                def largest_value(nums):
                    return max(nums)
            """),
        ),
        tests=(
            (([1, 5, 3],), 5),
            (([9],), 9),
            (([-4, -2, -9],), -2),
            (([0, 0, 0],), 0),
            (([3, 3, 1],), 3),
            (([1, 2, 3, 4],), 4),
            (([10, 2, 3],), 10),
            (([-1, 0],), 0),
        ),
    ),
    BankProblem(
        problem_id="python_count_vowels",
        entry="count_vowels",
        statement=(
            "Count the vowels in a word. Only the lowercase letters a, e, i, o and u count; "
            "uppercase letters and y do not."
        ),
        kcs=("for loops", "string indexing", "character comparison", "boolean operators"),
        references=(
            _code("""
                def count_vowels(word):
                    count = 0
                    for i in range(len(word)):
                        c = word[i]
                        if c == "a" or c == "e" or c == "i" or c == "o" or c == "u":
                            count += 1
                    return count
            """),
            _code("""
                def count_vowels(word):
                    total = 0
                    for ch in word:
                        if ch in "aeiou":
                            total = total + 1
                    return total
            """),
        ),
        tests=(
            (("hello",), 2),
            (("",), 0),
            (("rhythm",), 0),
            (("aeiou",), 5),
            (("AEIOU",), 0),
            (("a",), 1),
            (("banana",), 3),
            (("queue",), 4),
            (("xyz o",), 1),
        ),
    ),
    BankProblem(
        problem_id="python_reverse_text",
        entry="reverse_text",
        statement="Return the given text with its characters in the opposite order.",
        kcs=("for loops", "string indexing", "string concatenation", "string length"),
        references=(
            _code("""
                def reverse_text(text):
                    result = ""
                    for i in range(len(text) - 1, -1, -1):
                        result = result + text[i]
                    return result
            """),
            _code("""
                def reverse_text(text):
                    reversed_text = ""
                    for ch in text:
                        reversed_text = ch + reversed_text
                    return reversed_text
            """),
            _code("""
                def reverse_text(text):
                    return text[::-1]
            """),
        ),
        tests=(
            (("abc",), "cba"),
            (("",), ""),
            (("x",), "x"),
            (("level",), "level"),
            (("Hello World",), "dlroW olleH"),
            (("ab",), "ba"),
            (("12345",), "54321"),
            (("  a",), "a  "),
        ),
    ),
    BankProblem(
        problem_id="python_is_palindrome",
        entry="is_palindrome",
        statement=(
            "Return True if the text reads the same forwards and backwards, comparing characters "
            "exactly (case matters). The empty text is a palindrome."
        ),
        kcs=("while loops", "string indexing", "character comparison", "string length"),
        references=(
            _code("""
                def is_palindrome(text):
                    left = 0
                    right = len(text) - 1
                    while left < right:
                        if text[left] != text[right]:
                            return False
                        left += 1
                        right -= 1
                    return True
            """),
            _code("""
                def is_palindrome(text):
                    same = True
                    n = len(text)
                    for i in range(n // 2):
                        if text[i] != text[n - 1 - i]:
                            same = False
                    return same
            """),
            _code("""
                def is_palindrome(text):
                    return text == text[::-1]
            """),
        ),
        tests=(
            (("racecar",), True),
            (("abba",), True),
            (("",), True),
            (("a",), True),
            (("ab",), False),
            (("abca",), False),
            (("Aa",), False),
            (("abcba",), True),
            (("abcda",), False),
        ),
    ),
    BankProblem(
        problem_id="python_ping_pong",
        entry="ping_pong",
        statement=(
            'Return a label for the number n: "PingPong" if n divides evenly by both 3 and 5, '
            '"Ping" if only by 3, "Pong" if only by 5, and otherwise the number itself as text '
            '(for example "7").'
        ),
        kcs=("modulo", "conditionals", "boolean operators", "string concatenation"),
        references=(
            _code("""
                def ping_pong(n):
                    if n % 3 == 0 and n % 5 == 0:
                        return "PingPong"
                    elif n % 3 == 0:
                        return "Ping"
                    elif n % 5 == 0:
                        return "Pong"
                    else:
                        return str(n)
            """),
            _code("""
                def ping_pong(n):
                    label = ""
                    if n % 3 == 0:
                        label = label + "Ping"
                    if n % 5 == 0:
                        label = label + "Pong"
                    if len(label) == 0:
                        label = str(n)
                    return label
            """),
        ),
        tests=(
            ((15,), "PingPong"),
            ((9,), "Ping"),
            ((10,), "Pong"),
            ((7,), "7"),
            ((1,), "1"),
            ((0,), "PingPong"),
            ((3,), "Ping"),
            ((5,), "Pong"),
            ((-6,), "Ping"),
            ((-2,), "-2"),
        ),
    ),
    BankProblem(
        problem_id="python_digit_sum",
        entry="digit_sum",
        statement="Given a number n that is 0 or more, return the sum of its decimal digits (digit_sum(472) is 13).",
        kcs=("while loops", "modulo", "arithmetic", "variables"),
        references=(
            _code("""
                def digit_sum(n):
                    total = 0
                    while n > 0:
                        total += n % 10
                        n = n // 10
                    return total
            """),
            _code("""
                def digit_sum(n):
                    total = 0
                    for digit in str(n):
                        total = total + int(digit)
                    return total
            """),
        ),
        tests=(
            ((472,), 13),
            ((0,), 0),
            ((5,), 5),
            ((10,), 1),
            ((99,), 18),
            ((1001,), 2),
            ((123456789,), 45),
            ((90,), 9),
        ),
    ),
    BankProblem(
        problem_id="python_range_product",
        entry="range_product",
        statement=(
            "Return the product of all whole numbers from a up to b, both included. When a is "
            "greater than b there are no numbers and the product is 1."
        ),
        kcs=("for loops", "arithmetic", "variables", "numeric comparison"),
        references=(
            _code("""
                def range_product(a, b):
                    product = 1
                    for i in range(a, b + 1):
                        product = product * i
                    return product
            """),
            _code("""
                def range_product(a, b):
                    if a > b:
                        return 1
                    result = 1
                    current = b
                    while current >= a:
                        result *= current
                        current -= 1
                    return result
            """),
        ),
        tests=(
            ((1, 4), 24),
            ((3, 3), 3),
            ((5, 4), 1),
            ((0, 5), 0),
            ((2, 5), 120),
            ((-3, -1), -6),
            ((-2, 2), 0),
            ((1, 1), 1),
            ((6, 7), 42),
        ),
    ),
    BankProblem(
        problem_id="python_count_pairs_with_sum",
        entry="count_pairs_with_sum",
        statement=(
            "Count the pairs of positions i < j in the list whose two values add up to target. "
            "Each pair of positions counts once, even when the values repeat."
        ),
        kcs=("nested loops", "array indexing", "arithmetic", "numeric comparison", "variables"),
        references=(
            _code("""
                def count_pairs_with_sum(nums, target):
                    count = 0
                    for i in range(len(nums)):
                        for j in range(i + 1, len(nums)):
                            if nums[i] + nums[j] == target:
                                count += 1
                    return count
            """),
            _code("""
                def count_pairs_with_sum(nums, target):
                    pairs = 0
                    i = 0
                    while i < len(nums) - 1:
                        j = i + 1
                        while j < len(nums):
                            total = nums[i] + nums[j]
                            if total == target:
                                pairs = pairs + 1
                            j += 1
                        i += 1
                    return pairs
            """),
        ),
        tests=(
            (([1, 2, 3, 4], 5), 2),
            (([], 3), 0),
            (([5], 10), 0),
            (([5, 5], 10), 1),
            (([2, 2, 2], 4), 3),
            (([1, -1, 0], 0), 1),
            (([0, 0], 0), 1),
            (([1, 2, 3], 100), 0),
            (([3, 1, 2, 4, 0], 4), 2),
        ),
    ),
    BankProblem(
        problem_id="python_staircase",
        entry="staircase",
        statement=(
            'Build a text staircase of n steps: step k is k stars, and the steps are joined by "|". '
            'For n = 3 the answer is "*|**|***"; for n = 0 or less it is empty.'
        ),
        kcs=("nested loops", "string concatenation", "conditionals"),
        references=(
            _code("""
                def staircase(n):
                    result = ""
                    for step in range(1, n + 1):
                        if step > 1:
                            result = result + "|"
                        for k in range(step):
                            result = result + "*"
                    return result
            """),
            _code("""
                def staircase(n):
                    rows = []
                    step = 1
                    while step <= n:
                        rows.append("*" * step)
                        step += 1
                    return "|".join(rows)
            """),
        ),
        tests=(
            ((3,), "*|**|***"),
            ((1,), "*"),
            ((0,), ""),
            ((2,), "*|**"),
            ((-1,), ""),
            ((4,), "*|**|***|****"),
            ((5,), "*|**|***|****|*****"),
            ((6,), "*|**|***|****|*****|******"),
        ),
    ),
    BankProblem(
        problem_id="python_same_ends",
        entry="same_ends",
        statement=(
            "Return True if the first and the last character of the text are the same character. "
            "A one-character text counts as True and the empty text as False."
        ),
        kcs=("string indexing", "character comparison", "string length", "conditionals"),
        references=(
            _code("""
                def same_ends(text):
                    if len(text) == 0:
                        return False
                    return text[0] == text[len(text) - 1]
            """),
            _code("""
                def same_ends(text):
                    result = False
                    if len(text) > 0:
                        first = text[0]
                        last = text[-1]
                        if first == last:
                            result = True
                        else:
                            result = False
                    return result
            """),
        ),
        tests=(
            (("abca",), True),
            (("abc",), False),
            (("",), False),
            (("x",), True),
            (("xx",), True),
            (("Ab",), False),
            (("Aa",), False),
            (("level",), True),
            ((" a ",), True),
        ),
    ),
    BankProblem(
        problem_id="python_greeting",
        entry="greeting",
        statement=(
            'Greet a person by the hour of the day (0 to 23): before 12 say "Good morning, NAME!", '
            'before 18 say "Good afternoon, NAME!", and otherwise "Good evening, NAME!".'
        ),
        kcs=("string formatting", "string concatenation", "conditionals", "numeric comparison"),
        references=(
            _code("""
                def greeting(name, hour):
                    if hour < 12:
                        return "Good morning, " + name + "!"
                    elif hour < 18:
                        return "Good afternoon, " + name + "!"
                    else:
                        return "Good evening, " + name + "!"
            """),
            _code("""
                def greeting(name, hour):
                    part = "evening"
                    if hour < 12:
                        part = "morning"
                    elif hour < 18:
                        part = "afternoon"
                    return f"Good {part}, {name}!"
            """),
        ),
        tests=(
            (("Ann", 9), "Good morning, Ann!"),
            (("Ann", 0), "Good morning, Ann!"),
            (("Bo", 11), "Good morning, Bo!"),
            (("Bo", 12), "Good afternoon, Bo!"),
            (("Chen", 17), "Good afternoon, Chen!"),
            (("Chen", 18), "Good evening, Chen!"),
            (("Dee", 23), "Good evening, Dee!"),
            (("", 15), "Good afternoon, !"),
        ),
    ),
    BankProblem(
        problem_id="python_format_price",
        entry="format_price",
        statement=(
            "Given an amount in cents (0 or more), return it as a price with a dollar sign and "
            'exactly two digits of cents: 305 becomes "$3.05" and 7 becomes "$0.07".'
        ),
        kcs=("string formatting", "arithmetic", "modulo", "string concatenation"),
        references=(
            _code("""
                def format_price(cents):
                    return "${}.{:02d}".format(cents // 100, cents % 100)
            """),
            _code("""
                def format_price(cents):
                    dollars = cents // 100
                    rest = cents % 100
                    rest_text = str(rest)
                    if rest < 10:
                        rest_text = "0" + rest_text
                    return "$" + str(dollars) + "." + rest_text
            """),
        ),
        tests=(
            ((305,), "$3.05"),
            ((7,), "$0.07"),
            ((0,), "$0.00"),
            ((100,), "$1.00"),
            ((99,), "$0.99"),
            ((1234,), "$12.34"),
            ((10,), "$0.10"),
            ((100001,), "$1000.01"),
        ),
    ),
    BankProblem(
        problem_id="python_strong_password",
        entry="strong_password",
        statement=(
            "A password is strong when it has at least 8 characters, at least one digit (0-9) and "
            "at least one uppercase letter (A-Z). Return True for a strong password."
        ),
        kcs=("for loops", "string length", "character comparison", "boolean operators", "string indexing"),
        references=(
            _code("""
                def strong_password(password):
                    if len(password) < 8:
                        return False
                    has_digit = False
                    has_upper = False
                    for i in range(len(password)):
                        c = password[i]
                        if c >= "0" and c <= "9":
                            has_digit = True
                        elif c >= "A" and c <= "Z":
                            has_upper = True
                    return has_digit and has_upper
            """),
            _code("""
                def strong_password(password):
                    digits = 0
                    uppers = 0
                    for ch in password:
                        if ch.isdigit():
                            digits += 1
                        if ch.isupper():
                            uppers += 1
                    return len(password) >= 8 and digits > 0 and uppers > 0
            """),
        ),
        tests=(
            (("Secret123",), True),
            (("secret123",), False),
            (("SECRETPASS",), False),
            (("",), False),
            (("Ab1",), False),
            (("Abcdefg1",), True),
            (("Abcdef1",), False),
            (("12345678A",), True),
            (("a1b2c3d4",), False),
        ),
    ),
    BankProblem(
        problem_id="python_login_allowed",
        entry="login_allowed",
        statement=(
            'The user "admin" may log in only with the password "letmein"; the user "guest" may '
            "log in with any password; nobody else may log in. Names and passwords are case "
            "sensitive. Return True when the login is allowed."
        ),
        kcs=("string equality", "boolean operators", "conditionals"),
        references=(
            _code("""
                def login_allowed(user, password):
                    if user == "admin":
                        return password == "letmein"
                    elif user == "guest":
                        return True
                    else:
                        return False
            """),
            _code("""
                def login_allowed(user, password):
                    is_admin = user == "admin" and password == "letmein"
                    is_guest = user == "guest"
                    return is_admin or is_guest
            """),
        ),
        tests=(
            (("admin", "letmein"), True),
            (("admin", "wrong"), False),
            (("admin", ""), False),
            (("guest", ""), True),
            (("guest", "anything"), True),
            (("Admin", "letmein"), False),
            (("", ""), False),
            (("bob", "letmein"), False),
            (("letmein", "admin"), False),
        ),
    ),
    BankProblem(
        problem_id="python_first_half",
        entry="first_half",
        statement=(
            "Return the first half of the text. When the length is odd, the middle character "
            'belongs to the second half, so the first half of "abcde" is "ab".'
        ),
        kcs=("string length", "string indexing", "arithmetic"),
        references=(
            _code("""
                def first_half(text):
                    half = len(text) // 2
                    return text[:half]
            """),
            _code("""
                def first_half(text):
                    result = ""
                    for i in range(len(text) // 2):
                        result += text[i]
                    return result
            """),
        ),
        tests=(
            (("abcd",), "ab"),
            (("abcde",), "ab"),
            (("",), ""),
            (("a",), ""),
            (("ab",), "a"),
            (("HelloThere",), "Hello"),
            (("xyz",), "x"),
            (("1234567890",), "12345"),
        ),
    ),
    BankProblem(
        problem_id="python_without_ends",
        entry="without_ends",
        statement=(
            "Return the text without its first and its last character. Texts shorter than two "
            "characters have nothing left, so return the empty text for them."
        ),
        kcs=("string indexing", "string length", "conditionals"),
        references=(
            _code("""
                def without_ends(text):
                    if len(text) < 2:
                        return ""
                    return text[1:len(text) - 1]
            """),
            _code("""
                def without_ends(text):
                    middle = ""
                    for i in range(1, len(text) - 1):
                        middle = middle + text[i]
                    return middle
            """),
        ),
        tests=(
            (("hello",), "ell"),
            (("ab",), ""),
            (("a",), ""),
            (("",), ""),
            (("abc",), "b"),
            (("[x]",), "x"),
            (("  ",), ""),
            (("coding",), "odin"),
        ),
    ),
    BankProblem(
        problem_id="python_count_word",
        entry="count_word",
        statement=(
            "Given a list of words and a target word, return how many of the words are exactly "
            "equal to the target (case sensitive)."
        ),
        kcs=("for loops", "string equality", "array indexing", "variables"),
        references=(
            _code("""
                def count_word(words, target):
                    count = 0
                    for i in range(len(words)):
                        if words[i] == target:
                            count += 1
                    return count
            """),
            _code("""
                def count_word(words, target):
                    matches = 0
                    for word in words:
                        if target == word:
                            matches = matches + 1
                    return matches
            """),
            _code("""
                def count_word(words, target):
                    return words.count(target)
            """),
        ),
        tests=(
            ((["a", "b", "a"], "a"), 2),
            (([], "a"), 0),
            ((["cat"], "cat"), 1),
            ((["cat"], "dog"), 0),
            ((["Cat", "cat", "CAT"], "cat"), 1),
            ((["", "x", ""], ""), 2),
            ((["to", "be", "or", "not", "to", "be"], "be"), 2),
            ((["ab", "abc", "a"], "ab"), 1),
        ),
    ),
    BankProblem(
        problem_id="python_running_total",
        entry="running_total",
        statement=(
            "Return a new list of the same length where position i holds the sum of the input "
            "values at positions 0 to i. The input list is not changed."
        ),
        kcs=("for loops", "array indexing", "arithmetic", "variables"),
        references=(
            _code("""
                def running_total(nums):
                    result = []
                    total = 0
                    for i in range(len(nums)):
                        total += nums[i]
                        result.append(total)
                    return result
            """),
            _code("""
                def running_total(nums):
                    totals = [0] * len(nums)
                    if len(nums) == 0:
                        return totals
                    totals[0] = nums[0]
                    for i in range(1, len(nums)):
                        totals[i] = totals[i - 1] + nums[i]
                    return totals
            """),
        ),
        tests=(
            (([1, 2, 3],), [1, 3, 6]),
            (([],), []),
            (([5],), [5]),
            (([0, 0, 0],), [0, 0, 0]),
            (([-1, 1, -1],), [-1, 0, -1]),
            (([10, -5, 2, 3],), [10, 5, 7, 10]),
            (([1, 1, 1, 1, 1],), [1, 2, 3, 4, 5]),
            (([7, 0],), [7, 7]),
        ),
    ),
    BankProblem(
        problem_id="python_strictly_increasing",
        entry="strictly_increasing",
        statement=(
            "Return True if every value in the list is larger than the value before it. "
            "Lists with fewer than two values count as increasing; equal neighbours do not."
        ),
        kcs=("for loops", "array indexing", "numeric comparison", "return statements"),
        references=(
            _code("""
                def strictly_increasing(nums):
                    for i in range(1, len(nums)):
                        if nums[i] <= nums[i - 1]:
                            return False
                    return True
            """),
            _code("""
                def strictly_increasing(nums):
                    increasing = True
                    i = 0
                    while i < len(nums) - 1 and increasing:
                        if nums[i] >= nums[i + 1]:
                            increasing = False
                        i += 1
                    return increasing
            """),
        ),
        tests=(
            (([1, 2, 3],), True),
            (([1, 2, 2],), False),
            (([],), True),
            (([4],), True),
            (([3, 2],), False),
            (([-5, -1, 0, 7],), True),
            (([1, 3, 2, 4],), False),
            (([0, 0],), False),
            (([2, 1, 5, 6],), False),
        ),
    ),
    BankProblem(
        problem_id="python_parking_fee",
        entry="parking_fee",
        statement=(
            "Parking is free for the first hour. On weekdays every further hour costs 3 dollars, "
            "but never more than 20 dollars in total. On weekends any stay longer than one hour "
            "costs a flat 5 dollars. Given the whole hours parked (0 or more) and whether it is the "
            "weekend, return the fee."
        ),
        kcs=("nested conditionals", "conditionals", "arithmetic", "numeric comparison"),
        references=(
            _code("""
                def parking_fee(hours, weekend):
                    if hours <= 1:
                        return 0
                    if weekend:
                        return 5
                    else:
                        fee = (hours - 1) * 3
                        if fee > 20:
                            fee = 20
                        return fee
            """),
            _code("""
                def parking_fee(hours, weekend):
                    fee = 0
                    if hours > 1:
                        if weekend:
                            fee = 5
                        else:
                            fee = min(20, 3 * (hours - 1))
                    return fee
            """),
        ),
        tests=(
            ((0, False), 0),
            ((1, False), 0),
            ((2, False), 3),
            ((5, False), 12),
            ((7, False), 18),
            ((8, False), 20),
            ((10, False), 20),
            ((1, True), 0),
            ((2, True), 5),
            ((12, True), 5),
            ((0, True), 0),
        ),
    ),
    BankProblem(
        problem_id="python_closer_to_ten",
        entry="closer_to_ten",
        statement=(
            "Given two numbers, return the one that is closer to 10. If both are the same distance "
            "from 10, return 0."
        ),
        kcs=("arithmetic", "numeric comparison", "conditionals", "variables"),
        references=(
            _code("""
                def closer_to_ten(a, b):
                    dist_a = abs(a - 10)
                    dist_b = abs(b - 10)
                    if dist_a < dist_b:
                        return a
                    elif dist_b < dist_a:
                        return b
                    else:
                        return 0
            """),
            _code("""
                def closer_to_ten(a, b):
                    dist_a = a - 10
                    if dist_a < 0:
                        dist_a = -dist_a
                    dist_b = b - 10
                    if dist_b < 0:
                        dist_b = -dist_b
                    answer = 0
                    if dist_a != dist_b:
                        answer = a if dist_a < dist_b else b
                    return answer
            """),
        ),
        tests=(
            ((8, 13), 8),
            ((13, 8), 8),
            ((13, 7), 0),
            ((10, 10), 0),
            ((10, 11), 10),
            ((-1, 25), -1),
            ((0, 20), 0),
            ((9, 12), 9),
            ((15, 15), 0),
        ),
    ),
    BankProblem(
        problem_id="python_count_doubles",
        entry="count_doubles",
        statement=(
            "Count the places where a character is directly followed by the same character. "
            '"aaa" has two such places and "abba" has one.'
        ),
        kcs=("for loops", "string indexing", "character comparison", "string length"),
        references=(
            _code("""
                def count_doubles(text):
                    count = 0
                    for i in range(len(text) - 1):
                        if text[i] == text[i + 1]:
                            count += 1
                    return count
            """),
            _code("""
                def count_doubles(text):
                    doubles = 0
                    i = 1
                    while i < len(text):
                        previous = text[i - 1]
                        current = text[i]
                        if previous == current:
                            doubles += 1
                        i += 1
                    return doubles
            """),
        ),
        tests=(
            (("aaa",), 2),
            (("abba",), 1),
            (("",), 0),
            (("a",), 0),
            (("ab",), 0),
            (("bookkeeper",), 3),
            (("aA",), 0),
            (("  ",), 1),
            (("xxyyzz",), 3),
        ),
    ),
    BankProblem(
        problem_id="python_collatz_steps",
        entry="collatz_steps",
        statement=(
            "Starting from n (1 or more), repeatedly halve the number when it is even, or replace it "
            "by three times it plus one when it is odd. Return how many steps it takes to reach 1."
        ),
        kcs=("while loops", "modulo", "conditionals", "arithmetic", "variables"),
        references=(
            _code("""
                def collatz_steps(n):
                    steps = 0
                    while n != 1:
                        if n % 2 == 0:
                            n = n // 2
                        else:
                            n = 3 * n + 1
                        steps += 1
                    return steps
            """),
            _code("""
                def collatz_steps(n):
                    current = n
                    count = 0
                    while current > 1:
                        even = current % 2 == 0
                        current = current // 2 if even else current * 3 + 1
                        count = count + 1
                    return count
            """),
        ),
        tests=(
            ((1,), 0),
            ((2,), 1),
            ((3,), 7),
            ((4,), 2),
            ((6,), 8),
            ((7,), 16),
            ((16,), 4),
            ((27,), 111),
        ),
    ),
    BankProblem(
        problem_id="python_is_prime",
        entry="is_prime",
        statement=(
            "Return True if n is a prime number: at least 2 and divisible only by 1 and itself. "
            "Numbers below 2, including negatives, are not prime."
        ),
        kcs=("for loops", "modulo", "conditionals", "return statements"),
        references=(
            _code("""
                def is_prime(n):
                    if n < 2:
                        return False
                    for d in range(2, n):
                        if n % d == 0:
                            return False
                    return True
            """),
            _code("""
                def is_prime(n):
                    prime = n >= 2
                    divisor = 2
                    while prime and divisor * divisor <= n:
                        if n % divisor == 0:
                            prime = False
                        divisor += 1
                    return prime
            """),
        ),
        tests=(
            ((0,), False),
            ((1,), False),
            ((2,), True),
            ((3,), True),
            ((4,), False),
            ((9,), False),
            ((13,), True),
            ((25,), False),
            ((97,), True),
            ((-7,), False),
        ),
    ),
    BankProblem(
        problem_id="python_has_duplicate",
        entry="has_duplicate",
        statement="Return True if some value appears at two or more positions of the list.",
        kcs=("nested loops", "array indexing", "numeric comparison", "boolean logic"),
        references=(
            _code("""
                def has_duplicate(nums):
                    for i in range(len(nums)):
                        for j in range(i + 1, len(nums)):
                            if nums[i] == nums[j]:
                                return True
                    return False
            """),
            _code("""
                def has_duplicate(nums):
                    found = False
                    for i in range(len(nums)):
                        for j in range(len(nums)):
                            if i != j and nums[i] == nums[j]:
                                found = True
                    return found
            """),
            _code("""
                def has_duplicate(nums):
                    return len(set(nums)) != len(nums)
            """),
        ),
        tests=(
            (([1, 2, 3],), False),
            (([1, 2, 1],), True),
            (([],), False),
            (([4],), False),
            (([0, 0],), True),
            (([-1, 1],), False),
            (([5, 6, 7, 5],), True),
            (([3, 1, 2, 4],), False),
        ),
    ),
    BankProblem(
        problem_id="python_exactly_one_true",
        entry="exactly_one_true",
        statement="Given three True/False flags, return True if exactly one of them is True.",
        kcs=("boolean logic", "boolean operators", "conditionals"),
        references=(
            _code("""
                def exactly_one_true(a, b, c):
                    return (a and not b and not c) or (not a and b and not c) or (not a and not b and c)
            """),
            _code("""
                def exactly_one_true(a, b, c):
                    count = 0
                    if a:
                        count += 1
                    if b:
                        count += 1
                    if c:
                        count += 1
                    return count == 1
            """),
        ),
        tests=(
            ((False, False, False), False),
            ((True, False, False), True),
            ((False, True, False), True),
            ((False, False, True), True),
            ((True, True, False), False),
            ((True, False, True), False),
            ((False, True, True), False),
            ((True, True, True), False),
        ),
    ),
    BankProblem(
        problem_id="python_initials",
        entry="initials",
        statement=(
            "Make initials from a first and a last name: each name that is not empty contributes "
            'its first character followed by a dot, so "Ada" and "Lovelace" give "A.L.".'
        ),
        kcs=("string indexing", "string concatenation", "string length", "conditionals"),
        references=(
            _code("""
                def initials(first, last):
                    result = ""
                    if len(first) > 0:
                        result = result + first[0] + "."
                    if len(last) > 0:
                        result = result + last[0] + "."
                    return result
            """),
            _code("""
                def initials(first, last):
                    if first == "" and last == "":
                        return ""
                    elif first == "":
                        return last[:1] + "."
                    elif last == "":
                        return first[:1] + "."
                    else:
                        return first[:1] + "." + last[:1] + "."
            """),
        ),
        tests=(
            (("Ada", "Lovelace"), "A.L."),
            (("", "Smith"), "S."),
            (("Jo", ""), "J."),
            (("", ""), ""),
            (("x", "y"), "x.y."),
            (("Grace", "Hopper"), "G.H."),
            (("alan", "Turing"), "a.T."),
            (("Q", "Q"), "Q.Q."),
        ),
    ),
    BankProblem(
        problem_id="python_percent_change",
        entry="percent_change",
        statement=(
            "Return the change from old_value to new_value as a percentage of old_value, as a float "
            "(from 4 to 5 is 25.0, from 3 to 4 is 33.33...). When old_value is 0, return 0.0."
        ),
        kcs=("arithmetic", "conditionals", "variables"),
        references=(
            _code("""
                def percent_change(old_value, new_value):
                    if old_value == 0:
                        return 0.0
                    return (new_value - old_value) * 100 / old_value
            """),
            _code("""
                def percent_change(old_value, new_value):
                    result = 0.0
                    if old_value != 0:
                        difference = new_value - old_value
                        ratio = difference / old_value
                        result = ratio * 100
                    return result
            """),
        ),
        tests=(
            ((100, 150), 50.0),
            ((200, 100), -50.0),
            ((0, 5), 0.0),
            ((3, 4), 100 / 3),
            ((50, 50), 0.0),
            ((-10, -5), -50.0),
            ((7, 0), -100.0),
            ((1, 2), 100.0),
            ((3, 1), -200 / 3),
        ),
    ),
    BankProblem(
        problem_id="python_repeat_joined",
        entry="repeat_joined",
        statement=(
            'Return word written n times with sep between neighbouring copies, so ("ab", 3, ",") '
            'gives "ab,ab,ab". When n is 0 or less, return the empty text.'
        ),
        kcs=("for loops", "string concatenation", "conditionals"),
        references=(
            _code("""
                def repeat_joined(word, n, sep):
                    result = ""
                    for i in range(n):
                        if i > 0:
                            result = result + sep
                        result = result + word
                    return result
            """),
            _code("""
                def repeat_joined(word, n, sep):
                    if n <= 0:
                        return ""
                    result = word
                    copies = 1
                    while copies < n:
                        result += sep + word
                        copies += 1
                    return result
            """),
            _code("""
                def repeat_joined(word, n, sep):
                    return sep.join([word] * max(n, 0))
            """),
        ),
        tests=(
            (("ab", 3, ","), "ab,ab,ab"),
            (("x", 1, "-"), "x"),
            (("", 3, "+"), "++"),
            (("hi", 2, ""), "hihi"),
            (("a", 0, ","), ""),
            (("a", -2, ","), ""),
            (("ok", 4, " "), "ok ok ok ok"),
            (("ab", 2, "--"), "ab--ab"),
        ),
    ),
    BankProblem(
        problem_id="python_score_line",
        entry="score_line",
        statement=(
            'Describe a quiz result as "NAME: POINTS/TOTAL (PERCENT%)" with the percentage rounded '
            'to one decimal place, for example "Ann: 7/10 (70.0%)" or "Bo: 1/3 (33.3%)". '
            "TOTAL is always positive."
        ),
        kcs=("string formatting", "arithmetic", "string concatenation"),
        references=(
            _code("""
                def score_line(name, points, total):
                    percent = 100 * points / total
                    return f"{name}: {points}/{total} ({percent:.1f}%)"
            """),
            _code("""
                def score_line(name, points, total):
                    percent = round(points * 1000 / total) / 10
                    return name + ": " + str(points) + "/" + str(total) + " (" + str(percent) + "%)"
            """),
        ),
        tests=(
            (("Ann", 7, 10), "Ann: 7/10 (70.0%)"),
            (("Bo", 1, 3), "Bo: 1/3 (33.3%)"),
            (("Cy", 2, 3), "Cy: 2/3 (66.7%)"),
            (("Di", 0, 5), "Di: 0/5 (0.0%)"),
            (("Ed", 5, 5), "Ed: 5/5 (100.0%)"),
            (("Flo", 3, 7), "Flo: 3/7 (42.9%)"),
            (("Gus", 1, 8), "Gus: 1/8 (12.5%)"),
            (("Ivy", 6, 4), "Ivy: 6/4 (150.0%)"),
            (("", 12, 40), ": 12/40 (30.0%)"),
        ),
    ),
    BankProblem(
        problem_id="python_count_primes",
        entry="count_primes",
        statement=(
            "Return how many prime numbers there are from 2 up to n inclusive. Write a helper "
            "function that decides whether one number is prime and use it."
        ),
        kcs=("function definition", "for loops", "modulo", "return statements"),
        references=(
            _code("""
                def is_prime(k):
                    for d in range(2, k):
                        if k % d == 0:
                            return False
                    return True


                def count_primes(n):
                    count = 0
                    for k in range(2, n + 1):
                        if is_prime(k):
                            count += 1
                    return count
            """),
            _code("""
                def count_primes(n):
                    def prime(value):
                        if value < 2:
                            return False
                        divisor = 2
                        while divisor * divisor <= value:
                            if value % divisor == 0:
                                return False
                            divisor += 1
                        return True

                    total = 0
                    k = n
                    while k >= 2:
                        if prime(k):
                            total = total + 1
                        k -= 1
                    return total
            """),
        ),
        tests=(
            ((0,), 0),
            ((1,), 0),
            ((2,), 1),
            ((3,), 2),
            ((10,), 4),
            ((11,), 5),
            ((20,), 8),
            ((30,), 10),
            ((-5,), 0),
        ),
    ),
    BankProblem(
        problem_id="python_longest_word",
        entry="longest_word",
        statement=(
            "Return the longest word in the list. When several words share the greatest length, "
            "return the first of them; for an empty list return the empty text."
        ),
        kcs=("for loops", "string length", "array indexing", "numeric comparison"),
        references=(
            _code("""
                def longest_word(words):
                    longest = ""
                    for i in range(len(words)):
                        if len(words[i]) > len(longest):
                            longest = words[i]
                    return longest
            """),
            _code("""
                def longest_word(words):
                    if len(words) == 0:
                        return ""
                    best_index = 0
                    i = 1
                    while i < len(words):
                        if len(words[i]) > len(words[best_index]):
                            best_index = i
                        i += 1
                    return words[best_index]
            """),
            _code("""
                def longest_word(words):
                    return max(words, key=len, default="")
            """),
        ),
        tests=(
            ((["a", "abc", "ab"],), "abc"),
            (([],), ""),
            ((["hi"],), "hi"),
            ((["ab", "cd"],), "ab"),
            ((["", ""],), ""),
            ((["x", "yy", "zz"],), "yy"),
            ((["hello", "world", "hi"],), "hello"),
            ((["a", "", "bcd", "efg"],), "bcd"),
        ),
    ),
    BankProblem(
        problem_id="python_weather_advice",
        entry="weather_advice",
        statement=(
            'Advise what to take outside. If the sky is "rainy", return "umbrella". Otherwise, '
            'if the sky is "snowy" or the temperature is below 5, return "coat". Otherwise, if '
            'the sky is "sunny" and the temperature is 25 or more, return "sunscreen". In all '
            'other cases return "nothing". Sky names are lowercase and case sensitive.'
        ),
        kcs=("string equality", "nested conditionals", "boolean operators", "numeric comparison"),
        references=(
            _code("""
                def weather_advice(sky, temp):
                    if sky == "rainy":
                        return "umbrella"
                    elif sky == "snowy" or temp < 5:
                        return "coat"
                    elif sky == "sunny" and temp >= 25:
                        return "sunscreen"
                    else:
                        return "nothing"
            """),
            _code("""
                def weather_advice(sky, temp):
                    advice = "nothing"
                    if sky == "rainy":
                        advice = "umbrella"
                    else:
                        if sky == "snowy" or temp < 5:
                            advice = "coat"
                        else:
                            if sky == "sunny" and temp >= 25:
                                advice = "sunscreen"
                    return advice
            """),
        ),
        tests=(
            (("rainy", 30), "umbrella"),
            (("rainy", 0), "umbrella"),
            (("snowy", 10), "coat"),
            (("sunny", 4), "coat"),
            (("cloudy", 4), "coat"),
            (("cloudy", 5), "nothing"),
            (("sunny", 25), "sunscreen"),
            (("sunny", 24), "nothing"),
            (("cloudy", 30), "nothing"),
            (("Sunny", 30), "nothing"),
        ),
    ),
    BankProblem(
        problem_id="python_celsius_to_fahrenheit",
        entry="celsius_to_fahrenheit",
        statement=(
            "Convert a temperature from degrees Celsius to degrees Fahrenheit: multiply by nine "
            "fifths and add 32. Keep the fractional part (37.0 becomes 98.6)."
        ),
        kcs=("arithmetic", "variables"),
        references=(
            _code("""
                def celsius_to_fahrenheit(celsius):
                    return celsius * 9 / 5 + 32
            """),
            _code("""
                def celsius_to_fahrenheit(celsius):
                    factor = 9.0 / 5.0
                    fahrenheit = celsius * factor + 32.0
                    return fahrenheit
            """),
        ),
        tests=(
            ((0.0,), 32.0),
            ((100.0,), 212.0),
            ((-40.0,), -40.0),
            ((37.0,), 98.6),
            ((36.6,), 97.88),
            ((-17.5,), 0.5),
            ((1.0,), 33.8),
            ((25.0,), 77.0),
        ),
    ),
    BankProblem(
        problem_id="python_first_digit_index",
        entry="first_digit_index",
        statement=(
            "Return the position of the first digit character (0-9) in the text, counting from 0, "
            "or -1 when the text contains no digit."
        ),
        kcs=("while loops", "string indexing", "character comparison", "return statements"),
        references=(
            _code("""
                def first_digit_index(text):
                    i = 0
                    while i < len(text):
                        c = text[i]
                        if c >= "0" and c <= "9":
                            return i
                        i += 1
                    return -1
            """),
            _code("""
                def first_digit_index(text):
                    position = -1
                    for i in range(len(text)):
                        if text[i].isdigit():
                            position = i
                            break
                    return position
            """),
        ),
        tests=(
            (("abc1",), 3),
            (("7up",), 0),
            (("",), -1),
            (("none",), -1),
            (("a1b2",), 1),
            (("5",), 0),
            (("x",), -1),
            (("room 101",), 5),
        ),
    ),
    BankProblem(
        problem_id="python_count_common",
        entry="count_common",
        statement=(
            "Given two lists of numbers, count the pairs (a position in the first, a position in "
            "the second) that hold equal values."
        ),
        kcs=("nested loops", "array indexing", "numeric comparison", "variables"),
        references=(
            _code("""
                def count_common(first, second):
                    count = 0
                    for i in range(len(first)):
                        for j in range(len(second)):
                            if first[i] == second[j]:
                                count += 1
                    return count
            """),
            _code("""
                def count_common(first, second):
                    matches = 0
                    for x in first:
                        j = 0
                        while j < len(second):
                            if second[j] == x:
                                matches = matches + 1
                            j += 1
                    return matches
            """),
        ),
        tests=(
            (([1, 2, 3], [3, 4, 1]), 2),
            (([], [1]), 0),
            (([1], []), 0),
            (([2, 2], [2]), 2),
            (([1, 1], [1, 1]), 4),
            (([5], [5]), 1),
            (([-1, 0], [0, -1, 0]), 3),
            (([1, 2], [3, 4]), 0),
        ),
    ),
    BankProblem(
        problem_id="python_doublings_to_reach",
        entry="doublings_to_reach",
        statement=(
            "A value starts at start (1 or more) and doubles once a day. Return how many days pass "
            "before it is at least target; if it already is, the answer is 0."
        ),
        kcs=("while loops", "arithmetic", "numeric comparison", "variables"),
        references=(
            _code("""
                def doublings_to_reach(start, target):
                    value = start
                    days = 0
                    while value < target:
                        value = value * 2
                        days += 1
                    return days
            """),
            _code("""
                def doublings_to_reach(start, target):
                    days = 0
                    while start * 2 ** days < target:
                        days = days + 1
                    return days
            """),
        ),
        tests=(
            ((1, 1), 0),
            ((1, 2), 1),
            ((1, 8), 3),
            ((1, 9), 4),
            ((3, 20), 3),
            ((5, 5), 0),
            ((10, 1), 0),
            ((2, 1000), 9),
            ((7, 0), 0),
        ),
    ),
    BankProblem(
        problem_id="python_rock_paper_scissors",
        entry="rock_paper_scissors",
        statement=(
            'Two players each pick "rock", "paper" or "scissors". Rock beats scissors, scissors '
            'beats paper and paper beats rock. Return "first" if the first player wins, "second" '
            'if the second player wins, and "tie" when both pick the same.'
        ),
        kcs=("string equality", "nested conditionals", "boolean operators"),
        references=(
            _code("""
                def rock_paper_scissors(first, second):
                    if first == second:
                        return "tie"
                    if first == "rock":
                        if second == "scissors":
                            return "first"
                        else:
                            return "second"
                    elif first == "paper":
                        if second == "rock":
                            return "first"
                        else:
                            return "second"
                    else:
                        if second == "paper":
                            return "first"
                        else:
                            return "second"
            """),
            _code("""
                def rock_paper_scissors(first, second):
                    first_wins = (
                        (first == "rock" and second == "scissors")
                        or (first == "scissors" and second == "paper")
                        or (first == "paper" and second == "rock")
                    )
                    if first == second:
                        result = "tie"
                    elif first_wins:
                        result = "first"
                    else:
                        result = "second"
                    return result
            """),
        ),
        tests=(
            (("rock", "rock"), "tie"),
            (("rock", "paper"), "second"),
            (("rock", "scissors"), "first"),
            (("paper", "rock"), "first"),
            (("paper", "paper"), "tie"),
            (("paper", "scissors"), "second"),
            (("scissors", "rock"), "second"),
            (("scissors", "paper"), "first"),
            (("scissors", "scissors"), "tie"),
        ),
    ),
    BankProblem(
        problem_id="python_simplify_fraction",
        entry="simplify_fraction",
        statement=(
            "Given a numerator (0 or more) and a positive denominator, return the fraction in lowest "
            'terms as "NUM/DEN": 4 and 6 give "2/3", 0 and 5 give "0/1". Write a helper that '
            "finds the greatest common divisor."
        ),
        kcs=("function definition", "while loops", "modulo", "string concatenation"),
        references=(
            _code("""
                def gcd(a, b):
                    while b != 0:
                        rest = a % b
                        a = b
                        b = rest
                    return a


                def simplify_fraction(num, den):
                    g = gcd(num, den)
                    return str(num // g) + "/" + str(den // g)
            """),
            _code("""
                def largest_common_divisor(a, b):
                    d = min(a, b)
                    while d > 1:
                        if a % d == 0 and b % d == 0:
                            return d
                        d -= 1
                    return 1


                def simplify_fraction(num, den):
                    if num == 0:
                        return "0/1"
                    divisor = largest_common_divisor(num, den)
                    return f"{num // divisor}/{den // divisor}"
            """),
        ),
        tests=(
            ((4, 6), "2/3"),
            ((0, 5), "0/1"),
            ((5, 5), "1/1"),
            ((3, 7), "3/7"),
            ((10, 4), "5/2"),
            ((12, 1), "12/1"),
            ((100, 25), "4/1"),
            ((1, 1), "1/1"),
            ((18, 24), "3/4"),
        ),
    ),
]
