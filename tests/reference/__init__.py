"""Plain-Python oracles the tests compare Spine against.

Nothing under this package imports ``spine``: a reference that shared code with the thing it
checks would agree with it by construction. Standard library only.
"""
