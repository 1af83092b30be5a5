// SPDX-License-Identifier: MIT
/* A hand-written SVG line plot (svg_plot.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "svg_plot.h"

#define COLUMNS 3
#define PANEL_W 360
#define PANEL_H 260
#define MARGIN_L 70 /* inside a panel: room for the y labels */
#define MARGIN_R 15
#define MARGIN_T 30
#define MARGIN_B 40
#define HEADER_H 70 /* the title and the legend */

static const char *const colours[SVG_MAX_SERIES] = {
	"#d62728", "#1f77b4", "#2ca02c", "#7f7f7f",
	"#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
};

/* @s with XML's special characters escaped. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void text(FILE *f, double x, double y, const char *anchor,
		 const char *extra, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y,
		anchor, extra);
	put_text(f, s);
	fputs("</text>\n", f);
}

/* A round upper bound for the y axis: 1, 2 or 5 times a power of 10. */
static double nice_max(double v)
{
	double p;

	if (!(v > 0))
		return 1;
	p = pow(10, floor(log10(v)));
	if (v <= p)
		return p;
	if (v <= 2 * p)
		return 2 * p;
	if (v <= 5 * p)
		return 5 * p;
	return 10 * p;
}

static void format_si(char *buf, size_t size, double v)
{
	if (v >= 1e6)
		snprintf(buf, size, "%gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%gk", v / 1e3);
	else
		snprintf(buf, size, "%g", v);
}

static void panel(FILE *f, const struct svg_panel *p, size_t n_series,
		  double ox, double oy)
{
	double w = PANEL_W - MARGIN_L - MARGIN_R;
	double h = PANEL_H - MARGIN_T - MARGIN_B;
	double x0 = ox + MARGIN_L, y0 = oy + MARGIN_T + h; /* the origin */
	double lo = INFINITY, hi = -INFINITY, ymax = 0, span;
	char buf[32];
	size_t i, s;
	int t;

	for (i = 0; i < p->n; i++) {
		if (p->x[i] > 0) {
			lo = fmin(lo, log2(p->x[i]));
			hi = fmax(hi, log2(p->x[i]));
		}
		for (s = 0; s < n_series; s++)
			if (p->y[s] && isfinite(p->y[s][i]))
				ymax = fmax(ymax, p->y[s][i]);
	}
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	span = hi > lo ? hi - lo : 1;
	ymax = nice_max(ymax);
#define PX(v) (x0 + (hi > lo ? (log2(v) - lo) / span * w : w / 2))
#define PY(v) (y0 - (v) / ymax * h)
	text(f, ox + PANEL_W / 2.0, oy + 18, "middle",
	     " font-weight=\"bold\"", p->title);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
		" fill=\"none\" stroke=\"#000\"/>\n", x0, y0 - h, w, h);
	for (t = 0; t <= 4; t++) {
		double v = ymax * t / 4;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, PY(v), x0 + w,
			PY(v));
		format_si(buf, sizeof(buf), v);
		text(f, x0 - 5, PY(v) + 4, "end", "", buf);
	}
	for (i = 0; i < p->n; i++) {
		if (!(p->x[i] > 0))
			continue;
		snprintf(buf, sizeof(buf), "%g", p->x[i]);
		text(f, PX(p->x[i]), y0 + 16, "middle", "", buf);
	}
	for (s = 0; s < n_series; s++) {
		const char *cmd = "M";

		if (!p->y[s])
			continue;
		fprintf(f, "<path fill=\"none\" stroke-width=\"2\" "
			"stroke=\"%s\" d=\"", colours[s]);
		for (i = 0; i < p->n; i++) {
			if (!(p->x[i] > 0) || !isfinite(p->y[s][i])) {
				cmd = "M";
				continue;
			}
			fprintf(f, "%s%.1f %.1f ", cmd, PX(p->x[i]),
				PY(p->y[s][i]));
			cmd = "L";
		}
		fputs("\"/>\n", f);
		for (i = 0; i < p->n; i++)
			if (p->x[i] > 0 && isfinite(p->y[s][i]))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" "
					"r=\"2.5\" fill=\"%s\"/>\n",
					PX(p->x[i]), PY(p->y[s][i]),
					colours[s]);
	}
#undef PX
#undef PY
}

int svg_plot_write(const char *path, const char *title, const char *x_label,
		   const char *y_label, const char *const *names,
		   size_t n_series, const struct svg_panel *panels,
		   size_t n_panels)
{
	size_t rows = (n_panels + COLUMNS - 1) / COLUMNS, i, s;
	double width = COLUMNS * PANEL_W, height = HEADER_H + rows * PANEL_H;
	char axes[256];
	FILE *f;
	int err;

	if (n_series > SVG_MAX_SERIES)
		return -EINVAL;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n",
		width, height, width, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
	text(f, width / 2, 20, "middle", " font-size=\"15\"", title);
	snprintf(axes, sizeof(axes), "x: %s (log scale); y: %s", x_label,
		 y_label);
	text(f, width / 2, 38, "middle", "", axes);
	for (s = 0; s < n_series; s++) {
		double lx = 20 + (double)s * 150;

		fprintf(f, "<line x1=\"%.1f\" y1=\"55\" x2=\"%.1f\" y2=\"55\" "
			"stroke=\"%s\" stroke-width=\"3\"/>\n", lx, lx + 25,
			colours[s]);
		text(f, lx + 30, 59, "start", "", names[s]);
	}
	for (i = 0; i < n_panels; i++)
		panel(f, &panels[i], n_series, (double)(i % COLUMNS) * PANEL_W,
		      HEADER_H + (double)(i / COLUMNS) * PANEL_H);
	fputs("</svg>\n", f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
