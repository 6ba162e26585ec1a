"""L2-penalised logistic regression by Newton's method: the fit behind the gate and the ranker."""

from __future__ import annotations

import numpy as np

# The gate's penalty: a handful of features over a few hundred questions.
DEFAULT_L2 = 0.1


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = DEFAULT_L2) -> tuple[np.ndarray, float]:
    """Weights and intercept of an L2-penalised logistic regression (intercept unpenalised)."""
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -30, 30)))
        gradient = design.T @ (p - y) + penalty * weights
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return weights[:-1], float(weights[-1])
