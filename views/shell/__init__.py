"""The page shell: what every page shares, done once (frame), every page declared once (registry), the navigation,
lecture mode, the interface language, failures said on the page, and how the model read a text."""
