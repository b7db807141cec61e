from dsl import *


def verify_0d3d703e(I):
    x0 = switch(I, ONE, FIVE)
    x1 = switch(x0, TWO, SIX)
    x2 = switch(x1, THREE, FOUR)
    x3 = switch(x2, EIGHT, NINE)
    return x3


def verify_1e0a9b12(I):
    x0 = dmirror(I)
    x1 = rbind(order, positive)
    x2 = apply(x1, x0)
    x3 = dmirror(x2)
    return x3


def verify_3c9b0459(I):
    x0 = crop(I, ORIGIN, THREE_BY_THREE)
    x1 = rot180(x0)
    return x1


def verify_67a3c6ac(I):
    x0 = vmirror(I)
    return x0


def verify_6d0aefbc(I):
    x0 = vmirror(I)
    x1 = hconcat(I, x0)
    return x1


def verify_aabf363d(I):
    x0 = height(I)
    x1 = decrement(x0)
    x2 = astuple(x1, ZERO)
    x3 = index(I, x2)
    x4 = initset(x2)
    x5 = fill(I, ZERO, x4)
    x6 = palette(x5)
    x7 = other(x6, ZERO)
    x8 = replace(x5, x7, x3)
    return x8


def verify_c59eb873(I):
    x0 = upscale(TWO, I)
    return x0


def verify_c8f0f002(I):
    x0 = replace(I, SEVEN, FIVE)
    return x0
