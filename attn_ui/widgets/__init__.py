"""What any page draws with: chart factories (charts, heatmap, matrix_display: arrays in, a chart out, no st), how
labels and numbers are written and read (text, numbers), shared controls (controls), the editable grids
(grid_editor) and Randomise (randomise). Imports attn_ui.infra and attn_ui.app.
"""
