"""Attack: end the child with os._exit(0) while the module is imported (a "clean" exit code)."""
import os

os._exit(0)
