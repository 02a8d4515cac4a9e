"""Java problems of the synthetic benchmark: `PROBLEMS`, a list of `BankProblem` (see bank.py).

Each task is a single method without a class, as CodeWorkout students submit it, written for this
project in the CodingBat style. Every problem has at least two reference solutions in different
styles (if/else chain vs early return, for vs while, accumulator vs library call) and at least eight
test cases with boundary values. Checked by `python -m pytest tests/test_bank.py`.
"""

from __future__ import annotations

from textwrap import dedent

from kaser.data.synth.bank import BankProblem


def _code(text: str) -> str:
    """A reference solution as written in this file, without the source indentation."""
    return dedent(text).strip("\n") + "\n"


PROBLEMS: list[BankProblem] = [
    BankProblem(
        problem_id="java_ticket_price",
        entry="ticketPrice",
        statement=(
            "A cinema charges 5 dollars for a child (age under 12), 7 dollars for a senior "
            "(age 65 or more) and 12 dollars for everyone else. Club members get 2 dollars off "
            "any ticket. Given the age and whether the customer is a member, return the price."
        ),
        kcs=("conditionals", "numeric comparison", "arithmetic", "boolean logic"),
        references=(
            _code("""
                public int ticketPrice(int age, boolean member) {
                    int price;
                    if (age < 12) {
                        price = 5;
                    } else if (age >= 65) {
                        price = 7;
                    } else {
                        price = 12;
                    }
                    if (member) {
                        price = price - 2;
                    }
                    return price;
                }
            """),
            _code("""
                public int ticketPrice(int age, boolean member) {
                    int discount = member ? 2 : 0;
                    if (age < 12) {
                        return 5 - discount;
                    }
                    if (age >= 65) {
                        return 7 - discount;
                    }
                    return 12 - discount;
                }
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
        problem_id="java_can_hike",
        entry="canHike",
        statement=(
            "We go hiking when the temperature (in degrees Celsius) is from 10 to 30 inclusive. "
            "When it rains we are pickier and only go when it is from 20 to 25 inclusive. Given the "
            "temperature and whether it is raining, return true if we go hiking."
        ),
        kcs=("boolean operators", "numeric comparison", "conditionals", "boolean logic"),
        references=(
            _code("""
                public boolean canHike(int temp, boolean raining) {
                    if (raining) {
                        return temp >= 20 && temp <= 25;
                    } else {
                        return temp >= 10 && temp <= 30;
                    }
                }
            """),
            _code("""
                public boolean canHike(int temp, boolean raining) {
                    int low = 10;
                    int high = 30;
                    if (raining) {
                        low = 20;
                        high = 25;
                    }
                    if (temp < low || temp > high) {
                        return false;
                    }
                    return true;
                }
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
        problem_id="java_letter_grade",
        entry="letterGrade",
        statement=(
            "Turn an exam score into a letter: \"A\" for 90 and above, \"B\" for 80 to 89, \"C\" for "
            "70 to 79, \"D\" for 60 to 69 and \"F\" below 60. A score below 0 or above 100 is a "
            "typing mistake: return \"?\" for it."
        ),
        kcs=("conditionals", "nested conditionals", "numeric comparison", "return statements"),
        references=(
            _code("""
                public String letterGrade(int score) {
                    if (score < 0 || score > 100) {
                        return "?";
                    } else if (score >= 90) {
                        return "A";
                    } else if (score >= 80) {
                        return "B";
                    } else if (score >= 70) {
                        return "C";
                    } else if (score >= 60) {
                        return "D";
                    } else {
                        return "F";
                    }
                }
            """),
            _code("""
                public String letterGrade(int score) {
                    String grade = "?";
                    if (score >= 0 && score <= 100) {
                        if (score < 60) {
                            grade = "F";
                        } else if (score < 70) {
                            grade = "D";
                        } else if (score < 80) {
                            grade = "C";
                        } else if (score < 90) {
                            grade = "B";
                        } else {
                            grade = "A";
                        }
                    }
                    return grade;
                }
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
        problem_id="java_middle_of_three",
        entry="middleOfThree",
        statement=(
            "Given three whole numbers, return the one that would sit in the middle if they were "
            "sorted. When two or more are equal, that shared value may be the middle one."
        ),
        kcs=("nested conditionals", "numeric comparison", "boolean operators"),
        references=(
            _code("""
                public int middleOfThree(int a, int b, int c) {
                    if (a <= b) {
                        if (b <= c) {
                            return b;
                        } else if (a <= c) {
                            return c;
                        } else {
                            return a;
                        }
                    } else {
                        if (a <= c) {
                            return a;
                        } else if (b <= c) {
                            return c;
                        } else {
                            return b;
                        }
                    }
                }
            """),
            _code("""
                public int middleOfThree(int a, int b, int c) {
                    if ((a >= b && a <= c) || (a <= b && a >= c)) {
                        return a;
                    }
                    if ((b >= a && b <= c) || (b <= a && b >= c)) {
                        return b;
                    }
                    return c;
                }
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
        problem_id="java_sum_skip_sevens",
        entry="sumSkipSevens",
        statement=(
            "Return the sum of three numbers, except that any number that is a multiple of 7 "
            "(including 0 and negative multiples) does not count and adds nothing."
        ),
        kcs=("modulo", "arithmetic", "conditionals", "variables"),
        references=(
            _code("""
                public int sumSkipSevens(int a, int b, int c) {
                    int sum = 0;
                    if (a % 7 != 0) {
                        sum += a;
                    }
                    if (b % 7 != 0) {
                        sum += b;
                    }
                    if (c % 7 != 0) {
                        sum += c;
                    }
                    return sum;
                }
            """),
            _code("""
                public int sumSkipSevens(int a, int b, int c) {
                    int[] values = {a, b, c};
                    int total = 0;
                    for (int i = 0; i < values.length; i++) {
                        if (values[i] % 7 == 0) {
                            continue;
                        }
                        total = total + values[i];
                    }
                    return total;
                }
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
        problem_id="java_is_leap_year",
        entry="isLeapYear",
        statement=(
            "A year is a leap year when it divides evenly by 4, except that years dividing evenly by "
            "100 are not, unless they also divide evenly by 400. Return true for a leap year."
        ),
        kcs=("modulo", "boolean operators", "conditionals", "boolean logic"),
        references=(
            _code("""
                public boolean isLeapYear(int year) {
                    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
                }
            """),
            _code("""
                public boolean isLeapYear(int year) {
                    if (year % 400 == 0) {
                        return true;
                    } else if (year % 100 == 0) {
                        return false;
                    } else if (year % 4 == 0) {
                        return true;
                    } else {
                        return false;
                    }
                }
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
        problem_id="java_average_of_three",
        entry="averageOfThree",
        statement=(
            "Return the average of three whole-number measurements as a double, keeping the "
            "fractional part (the average of 1, 2 and 2 is 1.666...)."
        ),
        kcs=("arithmetic", "variables", "return statements"),
        references=(
            _code("""
                public double averageOfThree(int a, int b, int c) {
                    int sum = a + b + c;
                    double average = sum / 3.0;
                    return average;
                }
            """),
            _code("""
                public double averageOfThree(int a, int b, int c) {
                    return (double) (a + b + c) / 3;
                }
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
        problem_id="java_array_average",
        entry="arrayAverage",
        statement=(
            "Return the average of the numbers in an int array as a double, keeping the fractional "
            "part. An empty array has average 0.0."
        ),
        kcs=("for loops", "array indexing", "arithmetic", "conditionals"),
        references=(
            _code("""
                public double arrayAverage(int[] nums) {
                    if (nums.length == 0) {
                        return 0.0;
                    }
                    int sum = 0;
                    for (int i = 0; i < nums.length; i++) {
                        sum += nums[i];
                    }
                    return (double) sum / nums.length;
                }
            """),
            _code("""
                public double arrayAverage(int[] nums) {
                    double total = 0;
                    int count = 0;
                    int i = 0;
                    while (i < nums.length) {
                        total = total + nums[i];
                        count++;
                        i++;
                    }
                    if (count > 0) {
                        return total / count;
                    } else {
                        return 0.0;
                    }
                }
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
        problem_id="java_count_evens",
        entry="countEvens",
        statement="Return how many of the numbers in an int array are even. Zero and negative even numbers count too.",
        kcs=("for loops", "array indexing", "modulo", "conditionals", "variables"),
        references=(
            _code("""
                public int countEvens(int[] nums) {
                    int count = 0;
                    for (int i = 0; i < nums.length; i++) {
                        if (nums[i] % 2 == 0) {
                            count++;
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countEvens(int[] nums) {
                    int evens = 0;
                    int index = 0;
                    while (index < nums.length) {
                        int value = nums[index];
                        if (value % 2 != 0) {
                            index++;
                            continue;
                        }
                        evens = evens + 1;
                        index++;
                    }
                    return evens;
                }
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
        problem_id="java_largest_value",
        entry="largestValue",
        statement="Given an int array with at least one element, return its largest value.",
        kcs=("for loops", "array indexing", "numeric comparison", "variables"),
        references=(
            _code("""
                public int largestValue(int[] nums) {
                    int largest = nums[0];
                    for (int i = 1; i < nums.length; i++) {
                        if (nums[i] > largest) {
                            largest = nums[i];
                        }
                    }
                    return largest;
                }
            """),
            _code("""
                public int largestValue(int[] nums) {
                    int best = Integer.MIN_VALUE;
                    for (int value : nums) {
                        best = Math.max(best, value);
                    }
                    return best;
                }
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
        problem_id="java_count_vowels",
        entry="countVowels",
        statement=(
            "Count the vowels in a word. Only the lowercase letters a, e, i, o and u count; "
            "uppercase letters and y do not."
        ),
        kcs=("for loops", "string indexing", "character comparison", "boolean operators"),
        references=(
            _code("""
                public int countVowels(String word) {
                    int count = 0;
                    for (int i = 0; i < word.length(); i++) {
                        char c = word.charAt(i);
                        if (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u') {
                            count++;
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countVowels(String word) {
                    String vowels = "aeiou";
                    int total = 0;
                    int i = 0;
                    while (i < word.length()) {
                        if (vowels.indexOf(word.charAt(i)) >= 0) {
                            total += 1;
                        }
                        i++;
                    }
                    return total;
                }
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
        problem_id="java_reverse_text",
        entry="reverseText",
        statement="Return the given text with its characters in the opposite order.",
        kcs=("for loops", "string indexing", "string concatenation", "string length"),
        references=(
            _code("""
                public String reverseText(String text) {
                    String result = "";
                    for (int i = text.length() - 1; i >= 0; i--) {
                        result = result + text.charAt(i);
                    }
                    return result;
                }
            """),
            _code("""
                public String reverseText(String text) {
                    String reversed = "";
                    for (int i = 0; i < text.length(); i++) {
                        reversed = text.charAt(i) + reversed;
                    }
                    return reversed;
                }
            """),
            _code("""
                public String reverseText(String text) {
                    return new StringBuilder(text).reverse().toString();
                }
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
        problem_id="java_is_palindrome",
        entry="isPalindrome",
        statement=(
            "Return true if the text reads the same forwards and backwards, comparing characters "
            "exactly (case matters). The empty text is a palindrome."
        ),
        kcs=("while loops", "string indexing", "character comparison", "string length"),
        references=(
            _code("""
                public boolean isPalindrome(String text) {
                    int left = 0;
                    int right = text.length() - 1;
                    while (left < right) {
                        if (text.charAt(left) != text.charAt(right)) {
                            return false;
                        }
                        left++;
                        right--;
                    }
                    return true;
                }
            """),
            _code("""
                public boolean isPalindrome(String text) {
                    boolean same = true;
                    int n = text.length();
                    for (int i = 0; i < n / 2; i++) {
                        if (text.charAt(i) != text.charAt(n - 1 - i)) {
                            same = false;
                        }
                    }
                    return same;
                }
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
        problem_id="java_ping_pong",
        entry="pingPong",
        statement=(
            "Return a label for the number n: \"PingPong\" if n divides evenly by both 3 and 5, "
            "\"Ping\" if only by 3, \"Pong\" if only by 5, and otherwise the number itself as "
            "text (for example \"7\")."
        ),
        kcs=("modulo", "conditionals", "boolean operators", "string concatenation"),
        references=(
            _code("""
                public String pingPong(int n) {
                    if (n % 3 == 0 && n % 5 == 0) {
                        return "PingPong";
                    } else if (n % 3 == 0) {
                        return "Ping";
                    } else if (n % 5 == 0) {
                        return "Pong";
                    } else {
                        return "" + n;
                    }
                }
            """),
            _code("""
                public String pingPong(int n) {
                    String label = "";
                    if (n % 3 == 0) {
                        label = label + "Ping";
                    }
                    if (n % 5 == 0) {
                        label = label + "Pong";
                    }
                    if (label.length() == 0) {
                        label = String.valueOf(n);
                    }
                    return label;
                }
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
        problem_id="java_digit_sum",
        entry="digitSum",
        statement="Given a number n that is 0 or more, return the sum of its decimal digits (digitSum(472) is 13).",
        kcs=("while loops", "modulo", "arithmetic", "variables"),
        references=(
            _code("""
                public int digitSum(int n) {
                    int sum = 0;
                    while (n > 0) {
                        sum += n % 10;
                        n = n / 10;
                    }
                    return sum;
                }
            """),
            _code("""
                public int digitSum(int n) {
                    String digits = String.valueOf(n);
                    int total = 0;
                    for (int i = 0; i < digits.length(); i++) {
                        total = total + (digits.charAt(i) - '0');
                    }
                    return total;
                }
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
        problem_id="java_range_product",
        entry="rangeProduct",
        statement=(
            "Return the product of all whole numbers from a up to b, both included. When a is "
            "greater than b there are no numbers and the product is 1."
        ),
        kcs=("for loops", "arithmetic", "variables", "numeric comparison"),
        references=(
            _code("""
                public int rangeProduct(int a, int b) {
                    int product = 1;
                    for (int i = a; i <= b; i++) {
                        product = product * i;
                    }
                    return product;
                }
            """),
            _code("""
                public int rangeProduct(int a, int b) {
                    if (a > b) {
                        return 1;
                    }
                    int result = 1;
                    int current = b;
                    while (current >= a) {
                        result *= current;
                        current--;
                    }
                    return result;
                }
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
        problem_id="java_count_pairs_with_sum",
        entry="countPairsWithSum",
        statement=(
            "Count the pairs of positions i < j in the array whose two values add up to target. "
            "Each pair of positions counts once, even when the values repeat."
        ),
        kcs=("nested loops", "array indexing", "arithmetic", "numeric comparison", "variables"),
        references=(
            _code("""
                public int countPairsWithSum(int[] nums, int target) {
                    int count = 0;
                    for (int i = 0; i < nums.length; i++) {
                        for (int j = i + 1; j < nums.length; j++) {
                            if (nums[i] + nums[j] == target) {
                                count++;
                            }
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countPairsWithSum(int[] nums, int target) {
                    int pairs = 0;
                    int i = 0;
                    while (i < nums.length - 1) {
                        int j = i + 1;
                        while (j < nums.length) {
                            int sum = nums[i] + nums[j];
                            if (sum == target) {
                                pairs = pairs + 1;
                            }
                            j++;
                        }
                        i++;
                    }
                    return pairs;
                }
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
        problem_id="java_staircase",
        entry="staircase",
        statement=(
            "Build a text staircase of n steps: step k is k stars, and the steps are joined by "
            "\"|\". For n = 3 the answer is \"*|**|***\"; for n = 0 or less it is empty."
        ),
        kcs=("nested loops", "string concatenation", "conditionals"),
        references=(
            _code("""
                public String staircase(int n) {
                    String result = "";
                    for (int step = 1; step <= n; step++) {
                        if (step > 1) {
                            result = result + "|";
                        }
                        for (int k = 0; k < step; k++) {
                            result = result + "*";
                        }
                    }
                    return result;
                }
            """),
            _code("""
                public String staircase(int n) {
                    String stairs = "";
                    String row = "";
                    int step = 1;
                    while (step <= n) {
                        row = row + "*";
                        if (stairs.length() == 0) {
                            stairs = row;
                        } else {
                            stairs = stairs + "|" + row;
                        }
                        step++;
                    }
                    return stairs;
                }
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
        problem_id="java_same_ends",
        entry="sameEnds",
        statement=(
            "Return true if the first and the last character of the text are the same character. "
            "A one-character text counts as true and the empty text as false."
        ),
        kcs=("string indexing", "character comparison", "string length", "conditionals"),
        references=(
            _code("""
                public boolean sameEnds(String text) {
                    if (text.length() == 0) {
                        return false;
                    }
                    return text.charAt(0) == text.charAt(text.length() - 1);
                }
            """),
            _code("""
                public boolean sameEnds(String text) {
                    boolean result = false;
                    if (text.length() > 0) {
                        char first = text.charAt(0);
                        char last = text.charAt(text.length() - 1);
                        if (first == last) {
                            result = true;
                        } else {
                            result = false;
                        }
                    }
                    return result;
                }
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
        problem_id="java_greeting",
        entry="greeting",
        statement=(
            "Greet a person by the hour of the day (0 to 23): before 12 say \"Good morning, NAME!\", "
            "before 18 say \"Good afternoon, NAME!\", and otherwise \"Good evening, NAME!\"."
        ),
        kcs=("string formatting", "string concatenation", "conditionals", "numeric comparison"),
        references=(
            _code("""
                public String greeting(String name, int hour) {
                    if (hour < 12) {
                        return "Good morning, " + name + "!";
                    } else if (hour < 18) {
                        return "Good afternoon, " + name + "!";
                    } else {
                        return "Good evening, " + name + "!";
                    }
                }
            """),
            _code("""
                public String greeting(String name, int hour) {
                    String part = "evening";
                    if (hour < 12) {
                        part = "morning";
                    } else if (hour < 18) {
                        part = "afternoon";
                    }
                    return String.format("Good %s, %s!", part, name);
                }
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
        problem_id="java_format_price",
        entry="formatPrice",
        statement=(
            "Given an amount in cents (0 or more), return it as a price with a dollar sign and "
            "exactly two digits of cents: 305 becomes \"$3.05\" and 7 becomes \"$0.07\"."
        ),
        kcs=("string formatting", "arithmetic", "modulo", "string concatenation"),
        references=(
            _code("""
                public String formatPrice(int cents) {
                    return String.format("$%d.%02d", cents / 100, cents % 100);
                }
            """),
            _code("""
                public String formatPrice(int cents) {
                    int dollars = cents / 100;
                    int rest = cents % 100;
                    String restText = "" + rest;
                    if (rest < 10) {
                        restText = "0" + rest;
                    }
                    return "$" + dollars + "." + restText;
                }
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
        problem_id="java_strong_password",
        entry="strongPassword",
        statement=(
            "A password is strong when it has at least 8 characters, at least one digit (0-9) and "
            "at least one uppercase letter (A-Z). Return true for a strong password."
        ),
        kcs=("for loops", "string length", "character comparison", "boolean operators", "string indexing"),
        references=(
            _code("""
                public boolean strongPassword(String password) {
                    if (password.length() < 8) {
                        return false;
                    }
                    boolean hasDigit = false;
                    boolean hasUpper = false;
                    for (int i = 0; i < password.length(); i++) {
                        char c = password.charAt(i);
                        if (c >= '0' && c <= '9') {
                            hasDigit = true;
                        } else if (c >= 'A' && c <= 'Z') {
                            hasUpper = true;
                        }
                    }
                    return hasDigit && hasUpper;
                }
            """),
            _code("""
                public boolean strongPassword(String password) {
                    int digits = 0;
                    int uppers = 0;
                    int i = 0;
                    while (i < password.length()) {
                        if (Character.isDigit(password.charAt(i))) {
                            digits++;
                        }
                        if (Character.isUpperCase(password.charAt(i))) {
                            uppers++;
                        }
                        i++;
                    }
                    return password.length() >= 8 && digits > 0 && uppers > 0;
                }
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
        problem_id="java_login_allowed",
        entry="loginAllowed",
        statement=(
            "The user \"admin\" may log in only with the password \"letmein\"; the user \"guest\" may "
            "log in with any password; nobody else may log in. Names and passwords are case "
            "sensitive. Return true when the login is allowed."
        ),
        kcs=("string equality", "boolean operators", "conditionals"),
        references=(
            _code("""
                public boolean loginAllowed(String user, String password) {
                    if (user.equals("admin")) {
                        return password.equals("letmein");
                    } else if (user.equals("guest")) {
                        return true;
                    } else {
                        return false;
                    }
                }
            """),
            _code("""
                public boolean loginAllowed(String user, String password) {
                    boolean isAdmin = user.equals("admin") && password.equals("letmein");
                    boolean isGuest = user.equals("guest");
                    return isAdmin || isGuest;
                }
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
        problem_id="java_first_half",
        entry="firstHalf",
        statement=(
            "Return the first half of the text. When the length is odd, the middle character "
            "belongs to the second half, so the first half of \"abcde\" is \"ab\"."
        ),
        kcs=("string length", "string indexing", "arithmetic"),
        references=(
            _code("""
                public String firstHalf(String text) {
                    int half = text.length() / 2;
                    return text.substring(0, half);
                }
            """),
            _code("""
                public String firstHalf(String text) {
                    String result = "";
                    for (int i = 0; i < text.length() / 2; i++) {
                        result += text.charAt(i);
                    }
                    return result;
                }
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
        problem_id="java_without_ends",
        entry="withoutEnds",
        statement=(
            "Return the text without its first and its last character. Texts shorter than two "
            "characters have nothing left, so return the empty text for them."
        ),
        kcs=("string indexing", "string length", "conditionals"),
        references=(
            _code("""
                public String withoutEnds(String text) {
                    if (text.length() < 2) {
                        return "";
                    }
                    return text.substring(1, text.length() - 1);
                }
            """),
            _code("""
                public String withoutEnds(String text) {
                    String middle = "";
                    for (int i = 1; i < text.length() - 1; i++) {
                        middle = middle + text.charAt(i);
                    }
                    return middle;
                }
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
        problem_id="java_count_word",
        entry="countWord",
        statement=(
            "Given an array of words and a target word, return how many of the words are exactly "
            "equal to the target (case sensitive)."
        ),
        kcs=("for loops", "string equality", "array indexing", "variables"),
        references=(
            _code("""
                public int countWord(String[] words, String target) {
                    int count = 0;
                    for (int i = 0; i < words.length; i++) {
                        if (words[i].equals(target)) {
                            count++;
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countWord(String[] words, String target) {
                    int matches = 0;
                    for (String word : words) {
                        if (target.equals(word)) {
                            matches = matches + 1;
                        }
                    }
                    return matches;
                }
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
        problem_id="java_running_total",
        entry="runningTotal",
        statement=(
            "Return a new array of the same length where position i holds the sum of the input "
            "values at positions 0 to i. The input array is not changed."
        ),
        kcs=("for loops", "array indexing", "arithmetic", "variables"),
        references=(
            _code("""
                public int[] runningTotal(int[] nums) {
                    int[] result = new int[nums.length];
                    int sum = 0;
                    for (int i = 0; i < nums.length; i++) {
                        sum += nums[i];
                        result[i] = sum;
                    }
                    return result;
                }
            """),
            _code("""
                public int[] runningTotal(int[] nums) {
                    int[] totals = new int[nums.length];
                    if (nums.length == 0) {
                        return totals;
                    }
                    totals[0] = nums[0];
                    for (int i = 1; i < nums.length; i++) {
                        totals[i] = totals[i - 1] + nums[i];
                    }
                    return totals;
                }
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
        problem_id="java_strictly_increasing",
        entry="strictlyIncreasing",
        statement=(
            "Return true if every value in the array is larger than the value before it. "
            "Arrays with fewer than two values count as increasing; equal neighbours do not."
        ),
        kcs=("for loops", "array indexing", "numeric comparison", "return statements"),
        references=(
            _code("""
                public boolean strictlyIncreasing(int[] nums) {
                    for (int i = 1; i < nums.length; i++) {
                        if (nums[i] <= nums[i - 1]) {
                            return false;
                        }
                    }
                    return true;
                }
            """),
            _code("""
                public boolean strictlyIncreasing(int[] nums) {
                    boolean increasing = true;
                    int i = 0;
                    while (i < nums.length - 1 && increasing) {
                        if (nums[i] >= nums[i + 1]) {
                            increasing = false;
                        }
                        i++;
                    }
                    return increasing;
                }
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
        problem_id="java_parking_fee",
        entry="parkingFee",
        statement=(
            "Parking is free for the first hour. On weekdays every further hour costs 3 dollars, "
            "but never more than 20 dollars in total. On weekends any stay longer than one hour "
            "costs a flat 5 dollars. Given the whole hours parked (0 or more) and whether it is the "
            "weekend, return the fee."
        ),
        kcs=("nested conditionals", "conditionals", "arithmetic", "numeric comparison"),
        references=(
            _code("""
                public int parkingFee(int hours, boolean weekend) {
                    if (hours <= 1) {
                        return 0;
                    }
                    if (weekend) {
                        return 5;
                    } else {
                        int fee = (hours - 1) * 3;
                        if (fee > 20) {
                            fee = 20;
                        }
                        return fee;
                    }
                }
            """),
            _code("""
                public int parkingFee(int hours, boolean weekend) {
                    int fee = 0;
                    if (hours > 1) {
                        if (weekend) {
                            fee = 5;
                        } else {
                            fee = Math.min(20, 3 * (hours - 1));
                        }
                    }
                    return fee;
                }
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
        problem_id="java_closer_to_ten",
        entry="closerToTen",
        statement=(
            "Given two numbers, return the one that is closer to 10. If both are the same distance "
            "from 10, return 0."
        ),
        kcs=("arithmetic", "numeric comparison", "conditionals", "variables"),
        references=(
            _code("""
                public int closerToTen(int a, int b) {
                    int distA = Math.abs(a - 10);
                    int distB = Math.abs(b - 10);
                    if (distA < distB) {
                        return a;
                    } else if (distB < distA) {
                        return b;
                    } else {
                        return 0;
                    }
                }
            """),
            _code("""
                public int closerToTen(int a, int b) {
                    int distA = a - 10;
                    if (distA < 0) {
                        distA = -distA;
                    }
                    int distB = b - 10;
                    if (distB < 0) {
                        distB = -distB;
                    }
                    int answer = 0;
                    if (distA != distB) {
                        answer = distA < distB ? a : b;
                    }
                    return answer;
                }
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
        problem_id="java_count_doubles",
        entry="countDoubles",
        statement=(
            "Count the places where a character is directly followed by the same character. "
            "\"aaa\" has two such places and \"abba\" has one."
        ),
        kcs=("for loops", "string indexing", "character comparison", "string length"),
        references=(
            _code("""
                public int countDoubles(String text) {
                    int count = 0;
                    for (int i = 0; i < text.length() - 1; i++) {
                        if (text.charAt(i) == text.charAt(i + 1)) {
                            count++;
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countDoubles(String text) {
                    int doubles = 0;
                    int i = 1;
                    while (i < text.length()) {
                        char previous = text.charAt(i - 1);
                        char current = text.charAt(i);
                        if (previous == current) {
                            doubles += 1;
                        }
                        i++;
                    }
                    return doubles;
                }
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
        problem_id="java_collatz_steps",
        entry="collatzSteps",
        statement=(
            "Starting from n (1 or more), repeatedly halve the number when it is even, or replace it "
            "by three times it plus one when it is odd. Return how many steps it takes to reach 1."
        ),
        kcs=("while loops", "modulo", "conditionals", "arithmetic", "variables"),
        references=(
            _code("""
                public int collatzSteps(int n) {
                    int steps = 0;
                    while (n != 1) {
                        if (n % 2 == 0) {
                            n = n / 2;
                        } else {
                            n = 3 * n + 1;
                        }
                        steps++;
                    }
                    return steps;
                }
            """),
            _code("""
                public int collatzSteps(int n) {
                    int current = n;
                    int count = 0;
                    while (current > 1) {
                        boolean even = current % 2 == 0;
                        current = even ? current / 2 : current * 3 + 1;
                        count = count + 1;
                    }
                    return count;
                }
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
        problem_id="java_is_prime",
        entry="isPrime",
        statement=(
            "Return true if n is a prime number: at least 2 and divisible only by 1 and itself. "
            "Numbers below 2, including negatives, are not prime."
        ),
        kcs=("for loops", "modulo", "conditionals", "return statements"),
        references=(
            _code("""
                public boolean isPrime(int n) {
                    if (n < 2) {
                        return false;
                    }
                    for (int d = 2; d < n; d++) {
                        if (n % d == 0) {
                            return false;
                        }
                    }
                    return true;
                }
            """),
            _code("""
                public boolean isPrime(int n) {
                    boolean prime = n >= 2;
                    int divisor = 2;
                    while (prime && divisor * divisor <= n) {
                        if (n % divisor == 0) {
                            prime = false;
                        }
                        divisor++;
                    }
                    return prime;
                }
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
        problem_id="java_has_duplicate",
        entry="hasDuplicate",
        statement="Return true if some value appears at two or more positions of the array.",
        kcs=("nested loops", "array indexing", "numeric comparison", "boolean logic"),
        references=(
            _code("""
                public boolean hasDuplicate(int[] nums) {
                    for (int i = 0; i < nums.length; i++) {
                        for (int j = i + 1; j < nums.length; j++) {
                            if (nums[i] == nums[j]) {
                                return true;
                            }
                        }
                    }
                    return false;
                }
            """),
            _code("""
                public boolean hasDuplicate(int[] nums) {
                    boolean found = false;
                    for (int i = 0; i < nums.length; i++) {
                        for (int j = 0; j < nums.length; j++) {
                            if (i != j && nums[i] == nums[j]) {
                                found = true;
                            }
                        }
                    }
                    return found;
                }
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
        problem_id="java_exactly_one_true",
        entry="exactlyOneTrue",
        statement="Given three true/false flags, return true if exactly one of them is true.",
        kcs=("boolean logic", "boolean operators", "conditionals"),
        references=(
            _code("""
                public boolean exactlyOneTrue(boolean a, boolean b, boolean c) {
                    return (a && !b && !c) || (!a && b && !c) || (!a && !b && c);
                }
            """),
            _code("""
                public boolean exactlyOneTrue(boolean a, boolean b, boolean c) {
                    int count = 0;
                    if (a) {
                        count++;
                    }
                    if (b) {
                        count++;
                    }
                    if (c) {
                        count++;
                    }
                    return count == 1;
                }
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
        problem_id="java_initials",
        entry="initials",
        statement=(
            "Make initials from a first and a last name: each name that is not empty contributes "
            "its first character followed by a dot, so \"Ada\" and \"Lovelace\" give \"A.L.\"."
        ),
        kcs=("string indexing", "string concatenation", "string length", "conditionals"),
        references=(
            _code("""
                public String initials(String first, String last) {
                    String result = "";
                    if (first.length() > 0) {
                        result = result + first.charAt(0) + ".";
                    }
                    if (last.length() > 0) {
                        result = result + last.charAt(0) + ".";
                    }
                    return result;
                }
            """),
            _code("""
                public String initials(String first, String last) {
                    if (first.isEmpty() && last.isEmpty()) {
                        return "";
                    } else if (first.isEmpty()) {
                        return last.substring(0, 1) + ".";
                    } else if (last.isEmpty()) {
                        return first.substring(0, 1) + ".";
                    } else {
                        return first.substring(0, 1) + "." + last.substring(0, 1) + ".";
                    }
                }
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
        problem_id="java_percent_change",
        entry="percentChange",
        statement=(
            "Return the change from oldValue to newValue as a percentage of oldValue, as a double "
            "(from 4 to 5 is 25.0, from 3 to 4 is 33.33...). When oldValue is 0, return 0.0."
        ),
        kcs=("arithmetic", "conditionals", "variables"),
        references=(
            _code("""
                public double percentChange(int oldValue, int newValue) {
                    if (oldValue == 0) {
                        return 0.0;
                    }
                    return (newValue - oldValue) * 100.0 / oldValue;
                }
            """),
            _code("""
                public double percentChange(int oldValue, int newValue) {
                    double result = 0.0;
                    if (oldValue != 0) {
                        double difference = newValue - oldValue;
                        double ratio = difference / oldValue;
                        result = ratio * 100;
                    }
                    return result;
                }
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
        problem_id="java_repeat_joined",
        entry="repeatJoined",
        statement=(
            "Return word written n times with sep between neighbouring copies, so (\"ab\", 3, \",\") "
            "gives \"ab,ab,ab\". When n is 0 or less, return the empty text."
        ),
        kcs=("for loops", "string concatenation", "conditionals"),
        references=(
            _code("""
                public String repeatJoined(String word, int n, String sep) {
                    String result = "";
                    for (int i = 0; i < n; i++) {
                        if (i > 0) {
                            result = result + sep;
                        }
                        result = result + word;
                    }
                    return result;
                }
            """),
            _code("""
                public String repeatJoined(String word, int n, String sep) {
                    if (n <= 0) {
                        return "";
                    }
                    String result = word;
                    int copies = 1;
                    while (copies < n) {
                        result += sep + word;
                        copies++;
                    }
                    return result;
                }
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
        problem_id="java_score_line",
        entry="scoreLine",
        statement=(
            "Describe a quiz result as \"NAME: POINTS/TOTAL (PERCENT%)\" with the percentage rounded "
            "to one decimal place, for example \"Ann: 7/10 (70.0%)\" or \"Bo: 1/3 (33.3%)\". "
            "TOTAL is always positive."
        ),
        kcs=("string formatting", "arithmetic", "string concatenation"),
        references=(
            _code("""
                public String scoreLine(String name, int points, int total) {
                    double percent = 100.0 * points / total;
                    return String.format("%s: %d/%d (%.1f%%)", name, points, total, percent);
                }
            """),
            _code("""
                public String scoreLine(String name, int points, int total) {
                    double percent = Math.round(points * 1000.0 / total) / 10.0;
                    return name + ": " + points + "/" + total + " (" + percent + "%)";
                }
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
        problem_id="java_count_primes",
        entry="countPrimes",
        statement=(
            "Return how many prime numbers there are from 2 up to n inclusive. Write a helper "
            "method that decides whether one number is prime and use it."
        ),
        kcs=("function definition", "for loops", "modulo", "return statements"),
        references=(
            _code("""
                public int countPrimes(int n) {
                    int count = 0;
                    for (int k = 2; k <= n; k++) {
                        if (isPrime(k)) {
                            count++;
                        }
                    }
                    return count;
                }

                public boolean isPrime(int k) {
                    for (int d = 2; d < k; d++) {
                        if (k % d == 0) {
                            return false;
                        }
                    }
                    return true;
                }
            """),
            _code("""
                private boolean prime(int value) {
                    if (value < 2) {
                        return false;
                    }
                    int divisor = 2;
                    while (divisor * divisor <= value) {
                        if (value % divisor == 0) {
                            return false;
                        }
                        divisor++;
                    }
                    return true;
                }

                public int countPrimes(int n) {
                    int total = 0;
                    int k = n;
                    while (k >= 2) {
                        if (prime(k)) {
                            total = total + 1;
                        }
                        k--;
                    }
                    return total;
                }
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
        problem_id="java_longest_word",
        entry="longestWord",
        statement=(
            "Return the longest word in the array. When several words share the greatest length, "
            "return the first of them; for an empty array return the empty text."
        ),
        kcs=("for loops", "string length", "array indexing", "numeric comparison"),
        references=(
            _code("""
                public String longestWord(String[] words) {
                    String longest = "";
                    for (int i = 0; i < words.length; i++) {
                        if (words[i].length() > longest.length()) {
                            longest = words[i];
                        }
                    }
                    return longest;
                }
            """),
            _code("""
                public String longestWord(String[] words) {
                    if (words.length == 0) {
                        return "";
                    }
                    int bestIndex = 0;
                    int i = 1;
                    while (i < words.length) {
                        if (words[i].length() > words[bestIndex].length()) {
                            bestIndex = i;
                        }
                        i++;
                    }
                    return words[bestIndex];
                }
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
        problem_id="java_weather_advice",
        entry="weatherAdvice",
        statement=(
            "Advise what to take outside. If the sky is \"rainy\", return \"umbrella\". Otherwise, "
            "if the sky is \"snowy\" or the temperature is below 5, return \"coat\". Otherwise, if "
            "the sky is \"sunny\" and the temperature is 25 or more, return \"sunscreen\". In all "
            "other cases return \"nothing\". Sky names are lowercase and case sensitive."
        ),
        kcs=("string equality", "nested conditionals", "boolean operators", "numeric comparison"),
        references=(
            _code("""
                public String weatherAdvice(String sky, int temp) {
                    if (sky.equals("rainy")) {
                        return "umbrella";
                    } else if (sky.equals("snowy") || temp < 5) {
                        return "coat";
                    } else if (sky.equals("sunny") && temp >= 25) {
                        return "sunscreen";
                    } else {
                        return "nothing";
                    }
                }
            """),
            _code("""
                public String weatherAdvice(String sky, int temp) {
                    String advice = "nothing";
                    if (sky.equals("rainy")) {
                        advice = "umbrella";
                    } else {
                        if (sky.equals("snowy") || temp < 5) {
                            advice = "coat";
                        } else {
                            if (sky.equals("sunny") && temp >= 25) {
                                advice = "sunscreen";
                            }
                        }
                    }
                    return advice;
                }
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
        problem_id="java_celsius_to_fahrenheit",
        entry="celsiusToFahrenheit",
        statement=(
            "Convert a temperature from degrees Celsius to degrees Fahrenheit: multiply by nine "
            "fifths and add 32. Keep the fractional part (37.0 becomes 98.6)."
        ),
        kcs=("arithmetic", "variables"),
        references=(
            _code("""
                public double celsiusToFahrenheit(double celsius) {
                    return celsius * 9 / 5 + 32;
                }
            """),
            _code("""
                public double celsiusToFahrenheit(double celsius) {
                    double factor = 9.0 / 5.0;
                    double fahrenheit = celsius * factor + 32.0;
                    return fahrenheit;
                }
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
        problem_id="java_first_digit_index",
        entry="firstDigitIndex",
        statement=(
            "Return the position of the first digit character (0-9) in the text, counting from 0, "
            "or -1 when the text contains no digit."
        ),
        kcs=("while loops", "string indexing", "character comparison", "return statements"),
        references=(
            _code("""
                public int firstDigitIndex(String text) {
                    int i = 0;
                    while (i < text.length()) {
                        char c = text.charAt(i);
                        if (c >= '0' && c <= '9') {
                            return i;
                        }
                        i++;
                    }
                    return -1;
                }
            """),
            _code("""
                public int firstDigitIndex(String text) {
                    int position = -1;
                    for (int i = 0; i < text.length(); i++) {
                        if (Character.isDigit(text.charAt(i))) {
                            position = i;
                            break;
                        }
                    }
                    return position;
                }
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
        problem_id="java_count_common",
        entry="countCommon",
        statement=(
            "Given two int arrays, count the pairs (a position in the first, a position in the "
            "second) that hold equal values."
        ),
        kcs=("nested loops", "array indexing", "numeric comparison", "variables"),
        references=(
            _code("""
                public int countCommon(int[] first, int[] second) {
                    int count = 0;
                    for (int i = 0; i < first.length; i++) {
                        for (int j = 0; j < second.length; j++) {
                            if (first[i] == second[j]) {
                                count++;
                            }
                        }
                    }
                    return count;
                }
            """),
            _code("""
                public int countCommon(int[] first, int[] second) {
                    int matches = 0;
                    for (int x : first) {
                        int j = 0;
                        while (j < second.length) {
                            if (second[j] == x) {
                                matches = matches + 1;
                            }
                            j++;
                        }
                    }
                    return matches;
                }
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
        problem_id="java_doublings_to_reach",
        entry="doublingsToReach",
        statement=(
            "A value starts at start (1 or more) and doubles once a day. Return how many days pass "
            "before it is at least target; if it already is, the answer is 0."
        ),
        kcs=("while loops", "arithmetic", "numeric comparison", "variables"),
        references=(
            _code("""
                public int doublingsToReach(int start, int target) {
                    int value = start;
                    int days = 0;
                    while (value < target) {
                        value = value * 2;
                        days++;
                    }
                    return days;
                }
            """),
            _code("""
                public int doublingsToReach(int start, int target) {
                    int days = 0;
                    for (int value = start; value < target; value *= 2) {
                        days += 1;
                    }
                    return days;
                }
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
        problem_id="java_rock_paper_scissors",
        entry="rockPaperScissors",
        statement=(
            "Two players each pick \"rock\", \"paper\" or \"scissors\". Rock beats scissors, scissors "
            "beats paper and paper beats rock. Return \"first\" if the first player wins, \"second\" "
            "if the second player wins, and \"tie\" when both pick the same."
        ),
        kcs=("string equality", "nested conditionals", "boolean operators"),
        references=(
            _code("""
                public String rockPaperScissors(String first, String second) {
                    if (first.equals(second)) {
                        return "tie";
                    }
                    if (first.equals("rock")) {
                        if (second.equals("scissors")) {
                            return "first";
                        } else {
                            return "second";
                        }
                    } else if (first.equals("paper")) {
                        if (second.equals("rock")) {
                            return "first";
                        } else {
                            return "second";
                        }
                    } else {
                        if (second.equals("paper")) {
                            return "first";
                        } else {
                            return "second";
                        }
                    }
                }
            """),
            _code("""
                public String rockPaperScissors(String first, String second) {
                    boolean firstWins = (first.equals("rock") && second.equals("scissors"))
                            || (first.equals("scissors") && second.equals("paper"))
                            || (first.equals("paper") && second.equals("rock"));
                    String result;
                    if (first.equals(second)) {
                        result = "tie";
                    } else if (firstWins) {
                        result = "first";
                    } else {
                        result = "second";
                    }
                    return result;
                }
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
        problem_id="java_simplify_fraction",
        entry="simplifyFraction",
        statement=(
            "Given a numerator (0 or more) and a positive denominator, return the fraction in lowest "
            "terms as \"NUM/DEN\": 4 and 6 give \"2/3\", 0 and 5 give \"0/1\". Write a helper that "
            "finds the greatest common divisor."
        ),
        kcs=("function definition", "while loops", "modulo", "string concatenation"),
        references=(
            _code("""
                public String simplifyFraction(int num, int den) {
                    int g = gcd(num, den);
                    return (num / g) + "/" + (den / g);
                }

                public int gcd(int a, int b) {
                    while (b != 0) {
                        int rest = a % b;
                        a = b;
                        b = rest;
                    }
                    return a;
                }
            """),
            _code("""
                public String simplifyFraction(int num, int den) {
                    if (num == 0) {
                        return "0/1";
                    }
                    int divisor = largestCommonDivisor(num, den);
                    return String.format("%d/%d", num / divisor, den / divisor);
                }

                private int largestCommonDivisor(int a, int b) {
                    int d = Math.min(a, b);
                    while (d > 1) {
                        if (a % d == 0 && b % d == 0) {
                            return d;
                        }
                        d--;
                    }
                    return 1;
                }
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
