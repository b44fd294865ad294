package dev.weft.optim;

/**
 * What an optimizer's update gives: the new parameters (a tree of the parameters' structure) and the new state.
 *
 * @param <T> the parameters' tree type
 * @param <S> the optimizer's state type
 */
public record Update<T, S>(T params, S state) {
}
