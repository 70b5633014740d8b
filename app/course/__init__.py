"""The course as data: models of steps/ and the loader that reads them."""
