# the reference rope.py, unchanged: correct work that must keep its points
