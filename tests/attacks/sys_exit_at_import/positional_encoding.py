"""Attack: raise SystemExit while the module is imported."""
import sys

sys.exit(0)
