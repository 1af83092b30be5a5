/* SPDX-License-Identifier: MIT */
/*
 * A small SVG line plot, written by hand: panels side by side, in each
 * one curve per series over the same x values, a log2 x axis (thread
 * counts) and a linear y axis from 0. No dependency, valid XML.
 */
#ifndef TTMSIM_TOOLS_SVG_PLOT_H
#define TTMSIM_TOOLS_SVG_PLOT_H

#include <stddef.h>

#define SVG_MAX_SERIES 8

/* One panel: @n x values (> 0), and per series @n y values (NaN: none). */
struct svg_panel {
	char title[128];
	const double *x;
	size_t n;
	const double *y[SVG_MAX_SERIES];
};

/**
 * svg_plot_write - write the panels to @path.
 * @path: the file, created or truncated.
 * @title: the figure's title; @x_label, @y_label: the axes'.
 * @names: the series' names, @n_series of them (at most SVG_MAX_SERIES).
 * @panels: @n_panels panels, laid out three to a row.
 *
 * Return: 0, or a negative errno (the file could not be written).
 */
int svg_plot_write(const char *path, const char *title, const char *x_label,
		   const char *y_label, const char *const *names,
		   size_t n_series, const struct svg_panel *panels,
		   size_t n_panels);

#endif /* TTMSIM_TOOLS_SVG_PLOT_H */
