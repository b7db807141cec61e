#coding:L1
import zlib
exec(zlib.decompress(bytes('x^+°ÍIÌMJITH·Š.RHË/R(RÈÌSH‡3££“Òò‹’2ó *â2ó”“”bcµŒbÇÊç','L1')))
