"""The plotting library every package draws with (a floor of its own, above core only):
heatmaps per head, attention maps and loss curves, drawn from long tables. The HTML report
(pipeline/report/) only embeds what the stages drew, so editing it reruns only `report`."""
