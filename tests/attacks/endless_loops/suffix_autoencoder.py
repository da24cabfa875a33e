# the reference autoencoder.py, unchanged: correct work that must keep its points
