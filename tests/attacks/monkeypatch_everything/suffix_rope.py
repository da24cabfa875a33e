# the reference rope.py, unchanged: correct work graded after the attack in the same child, that must keep its points
