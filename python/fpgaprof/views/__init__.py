"""The views layer: how the analysis results read, as text and HTML, for the api (printed
tables, prof.summary(), Jupyter) and the renderers (report.html, the run digest) alike. A view
takes analysis rows, the report sections (summary.json's) or a Profile's record tables and
returns text or HTML; it computes nothing the analysis gives.

- ``tables``: Table and the text/HTML tables of analysis rows and record tables.
- ``sections``: the transfer, memory and device sections as text and HTML.
- ``memory``: report.html's memory view and dataflow graph of an HLO module.
- ``profile``: prof.summary() and the Profile in Jupyter.
- ``ranking``: the columns, the Amdahl line and the "best N" rows of a ranked table.
"""
