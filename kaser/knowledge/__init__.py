"""Knowledge tracing (paper §3.1, the student knowledge estimator): the LSTM that turns a student's history into a mastery profile
over knowledge components (`tracing`), and the classic KT baselines it is compared with
(`baselines`). Stage: `knowledge`.
"""
